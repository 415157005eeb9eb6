"""Object-motion prototypes (HD-EPIC Supp. D.1.6)."""
