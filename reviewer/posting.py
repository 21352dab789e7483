"""POST-only views that answer a GET by going back to the page they are posted from.

A decision posted after the session expired goes to the sign-in page with next= the POST's URL;
after signing in the browser GETs that URL. A 405 there would be a blank dead end: the page the
form was on is shown instead (what was typed is lost, but nothing was recorded, and the page says
the clause's state as it stands).
"""

from __future__ import annotations

from functools import wraps

from django.http import HttpResponseNotAllowed
from django.shortcuts import redirect
from django.urls import reverse


def post_only(back_to: str, *url_kwargs: str):
    """A POST-only view; a GET or HEAD redirects to the URL named ``back_to`` with ``url_kwargs`` of this
    one."""

    def decorator(view):
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            if request.method == "POST":
                return view(request, *args, **kwargs)
            if request.method in ("GET", "HEAD"):
                return redirect(reverse(back_to, kwargs={k: kwargs[k] for k in url_kwargs}))
            return HttpResponseNotAllowed(["POST"])

        return wrapper

    return decorator
