"""``boanon dashboard``: a local web page that follows a tuning run live from its store."""
