"""Nutrition prototypes (HD-EPIC Supp. D.1.3)."""
