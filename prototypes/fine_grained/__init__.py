"""Fine-grained action prototypes (HD-EPIC Supp. D.1.4): what, how, why and when of narrated actions."""
