"""Gaze prototypes (HD-EPIC Supp. D.1.7): what the wearer looks at, and what they will touch next."""
