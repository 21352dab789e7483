from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.urls import include, path

from reviewer.login import ThrottledAdminLoginForm, ThrottledLoginView

admin.site.login_form = ThrottledAdminLoginForm  # the admin's sign-in is throttled like ours

urlpatterns = [
    path("accounts/login/", ThrottledLoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # an invited member's one-time link (reviewer.views.members): they choose their password here
    path(
        "accounts/reset/<uidb64>/<token>/",
        login_not_required(auth_views.PasswordResetConfirmView.as_view()),
        name="password_reset_confirm",
    ),
    path(
        "accounts/reset/done/",
        login_not_required(auth_views.PasswordResetCompleteView.as_view()),
        name="password_reset_complete",
    ),
    path("admin/", admin.site.urls),
    path("dashboards/", include("dashboards.urls")),
    path("bulk/", include("bulk.urls")),
    path("", include("reviewer.urls")),
]
