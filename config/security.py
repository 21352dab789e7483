"""Security headers that Django does not set by itself."""

from django.conf import settings
from django.utils.cache import patch_cache_control

# Scripts and styles come only from our own static files (htmx is vendored, no CDN);
# no inline script, so contract text that contains HTML can never run.
DEFAULT_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'self'; frame-ancestors 'none'; form-action 'self'"
)


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        self.policy = getattr(settings, "CONTENT_SECURITY_POLICY", DEFAULT_CSP)

    def __call__(self, request):
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", self.policy)
        return response


class PrivatePagesMiddleware:
    """A page shown to a signed-in user (contract text, clauses, decisions) is kept by no cache: not by a
    proxy, and not by the browser, whose Back button after signing out on a shared computer showed the
    last contract from its cache. A response that sets its own Cache-Control keeps it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated and "Cache-Control" not in response.headers:
            patch_cache_control(response, private=True, no_store=True)
        return response
