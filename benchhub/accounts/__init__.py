"""People and their personal API tokens; the hashed-token base that runner tokens share."""
