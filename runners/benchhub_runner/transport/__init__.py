"""Talking to the server: the retrying HTTP client (client), the spool of uploads not yet
delivered (spool) and the policy of which addresses a fetch may reach (urlpolicy). A low
layer: it imports no other package of the agent."""
