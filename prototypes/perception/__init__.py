"""3D-perception prototypes (HD-EPIC Supp. D.1.5); the package is "perception" since a name cannot start with a digit."""
