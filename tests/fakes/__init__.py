"""Real stand-ins for the answer path's boundaries: a fake ``claude`` and a Messages API."""
