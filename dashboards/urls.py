from django.urls import path

from dashboards import views

app_name = "dashboards"

urlpatterns = [
    path("", views.dashboard, name="index"),
    path("refresh/", views.refresh, name="refresh"),
    path("alerts/", views.alert_log, name="alerts"),
    path("benchmarks/", views.benchmark_list, name="benchmarks"),
    path("benchmarks/import/", views.benchmark_import, name="benchmark-import"),
    path("benchmarks/run/", views.benchmark_run, name="benchmark-run"),
    path("benchmarks/runs/rows/", views.runs_fragment, name="runs-rows"),
    path("benchmarks/runs/<int:run_id>/", views.run_detail, name="run"),
]
