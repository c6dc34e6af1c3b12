"""PostgreSQL builds under test, named as their users name them, and their ordering."""
