from django.urls import path

from reviewer import views

urlpatterns = [
    path("", views.home, name="home"),
    path("engagements/<int:engagement_id>/", views.engagement_detail, name="engagement"),
    path("documents/<int:document_id>/file", views.document_file, name="document-file"),
]
