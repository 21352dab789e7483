"""Django's PostgreSQL backend on the embedded server, which starts when the first connection opens.

``config/settings.py`` names this backend when ``DATABASE_URL`` is unset; see :mod:`config.embedded`.
"""
