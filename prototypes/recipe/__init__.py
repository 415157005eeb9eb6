"""Recipe prototypes (HD-EPIC Supp. D.1.1)."""
