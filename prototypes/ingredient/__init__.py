"""Ingredient prototypes (HD-EPIC Supp. D.1.2)."""
