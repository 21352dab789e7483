"""Login with throttling: too many failures for one username from one address → wait."""
from django.conf import settings
from django.contrib.auth import views as auth_views
from django.core.cache import cache
from django.utils.decorators import method_decorator
from django.views.decorators.debug import sensitive_post_parameters


def _throttle_key(request) -> str:
    username = (request.POST.get("username") or "").strip().lower()
    address = request.META.get("REMOTE_ADDR", "")
    return f"login-failures:{username}:{address}"


@method_decorator(sensitive_post_parameters("password"), name="dispatch")
class ThrottledLoginView(auth_views.LoginView):
    template_name = "registration/login.html"
    redirect_authenticated_user = True

    def post(self, request, *args, **kwargs):
        if cache.get(_throttle_key(request), 0) >= settings.LOGIN_THROTTLE_LIMIT:
            form = self.get_form()
            form.errors.clear()
            form.add_error(None, "Too many failed sign-in attempts. Wait a few minutes and try again.")
            return self.render_to_response(self.get_context_data(form=form), status=429)
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form):
        key = _throttle_key(self.request)
        cache.add(key, 0, settings.LOGIN_THROTTLE_WINDOW)
        cache.incr(key)
        return super().form_invalid(form)

    def form_valid(self, form):
        cache.delete(_throttle_key(self.request))
        return super().form_valid(form)
