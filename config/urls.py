from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from reviewer.login import ThrottledAdminLoginForm, ThrottledLoginView

admin.site.login_form = ThrottledAdminLoginForm  # the admin's sign-in is throttled like ours

urlpatterns = [
    path("accounts/login/", ThrottledLoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("dashboards/", include("dashboards.urls")),
    path("bulk/", include("bulk.urls")),
    path("", include("reviewer.urls")),
]
