"""Login with throttling: too many failures for one username from one address, or from one address across
usernames (password spraying: one password tried on many accounts), → wait.

The throttle counts failures in the database (``LoginFailure``), not in the Redis cache: sign-in must not
depend on Redis, which the app can run without for a while (uploads are saved "not queued"), and a throttle
read from a cache that is down either fails every sign-in (a 500 for everyone) or fails open (unthrottled
guessing for as long as Redis stays down, which is when nobody is watching the sign-in page). Neither a
fallback: a second store would split the counts at each switch (failures before the outage forgotten during
it) and be exercised only in outages. The database is on the sign-in path already (the user, the session),
and a row per failure costs far less than the password hash it guards.

``HtmxLoginRequiredMiddleware`` is Django's LoginRequiredMiddleware with one change: an htmx
request without a session is answered 401 with ``HX-Redirect`` to the sign-in page (next= the
page the tab shows), so the whole tab signs in and comes back; a 302 would be followed by the
XHR and the sign-in page swapped into the panel.

``ThrottledAdminLoginForm`` puts the admin site's own sign-in form under the same throttle (set as
``admin.site.login_form`` in ``config.urls``): failures on either form count on both.
"""

from datetime import timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import views as auth_views
from django.contrib.auth.middleware import LoginRequiredMiddleware
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import resolve_url
from django.utils import timezone
from django.utils.decorators import method_decorator
from django.views.decorators.debug import sensitive_post_parameters

from config.client_address import client_address
from reviewer.htmx import is_fragment
from reviewer.models import LoginFailure


def _who(request) -> tuple[str, str]:
    """(username as typed, lower-cased; the client's address), cut to their columns."""
    username = (request.POST.get("username") or "").strip().lower()
    return username[:150], client_address(request.META, settings.TRUSTED_PROXY_COUNT)[:64]


TOO_MANY = "Too many failed sign-in attempts. Wait a few minutes and try again."


def throttled(request) -> bool:
    username, address = _who(request)
    now = timezone.now()
    of_user = LoginFailure.objects.filter(username=username, address=address)
    of_address = LoginFailure.objects.filter(address=address)
    return _reached(of_user, now, settings.LOGIN_THROTTLE_LIMIT, settings.LOGIN_THROTTLE_WINDOW) or _reached(
        of_address, now, settings.LOGIN_THROTTLE_ADDRESS_LIMIT, settings.LOGIN_THROTTLE_ADDRESS_WINDOW
    )


def _reached(failures, now, limit: int, window: int) -> bool:
    """Whether ``failures`` hold ``limit`` rows in the last ``window`` seconds (counting no further)."""
    recent = failures.filter(at__gte=now - timedelta(seconds=window))
    return recent.values("pk")[:limit].count() >= limit


def note_failure(request) -> None:
    username, address = _who(request)
    now = timezone.now()
    LoginFailure.objects.create(username=username, address=address, at=now)
    kept = max(settings.LOGIN_THROTTLE_WINDOW, settings.LOGIN_THROTTLE_ADDRESS_WINDOW)
    LoginFailure.objects.filter(at__lt=now - timedelta(seconds=kept)).delete()


def forget_failures(request) -> None:
    username, address = _who(request)
    LoginFailure.objects.filter(username=username, address=address).delete()


@method_decorator(sensitive_post_parameters("password"), name="dispatch")
class ThrottledLoginView(auth_views.LoginView):
    template_name = "registration/login.html"
    redirect_authenticated_user = True

    def post(self, request, *args, **kwargs):
        if throttled(request):
            form = self.get_form()
            form.errors.clear()
            form.add_error(None, TOO_MANY)
            return self.render_to_response(self.get_context_data(form=form), status=429)
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form):
        note_failure(self.request)
        return super().form_invalid(form)

    def form_valid(self, form):
        forget_failures(self.request)
        return super().form_valid(form)


class ThrottledAdminLoginForm(AdminAuthenticationForm):
    """The admin site's sign-in form under the same throttle (no password is checked while it holds)."""

    def clean(self):
        if throttled(self.request):
            raise ValidationError(TOO_MANY, code="throttled")
        try:
            cleaned = super().clean()
        except ValidationError:
            note_failure(self.request)
            raise
        if self.get_user() is not None:
            forget_failures(self.request)
        return cleaned


class HtmxLoginRequiredMiddleware(LoginRequiredMiddleware):
    def handle_no_permission(self, request, view_func):
        if not is_fragment(request):  # a page, or an htmx history restore (which wants a whole page)
            return super().handle_no_permission(request, view_func)
        shown = urlsplit(request.headers.get("HX-Current-URL", ""))
        page = (
            shown.path + (f"?{shown.query}" if shown.query else "") if shown.path else request.get_full_path()
        )
        login = auth_views.redirect_to_login(
            page, resolve_url(self.get_login_url(view_func)), self.get_redirect_field_name(view_func)
        )
        response = HttpResponse("Signed out: sign in again.", status=401, content_type="text/plain")
        response["HX-Redirect"] = login["Location"]
        return response
