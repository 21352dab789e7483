from django.urls import path

from bulk import views

app_name = "bulk"

urlpatterns = [
    path("", views.run_list, name="runs"),
    path("runs/<int:run_id>/", views.run_detail, name="run"),
    path("runs/<int:run_id>/status/", views.run_status, name="run-status"),
    path("engagements/<int:engagement_id>/new/", views.start, name="new"),
]
