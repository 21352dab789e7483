from django.urls import path, register_converter

from reviewer.views import (
    catalog,
    compare,
    deletion,
    doc_title,
    doc_type,
    engagement_catalog,
    engagements,
    exports,
    find,
    grid,
    members,
    pages,
    progress,
    review,
    search,
    summary,
    upload,
)


class ExportFormat:
    regex = "csv|json|xlsx"

    def to_python(self, value):
        return value

    def to_url(self, value):
        return value


register_converter(ExportFormat, "fmt")

urlpatterns = [
    path("", engagements.home, name="home"),
    path("catalog/", catalog.catalog, name="catalog"),
    path("catalog/<int:type_id>/edit/", catalog.edit, name="catalog-edit"),
    path("catalog/<int:type_id>/retire/", catalog.retire, name="catalog-retire"),
    path("engagements/new/", engagements.new_engagement, name="engagement-new"),
    path("engagements/<int:engagement_id>/", engagements.engagement_detail, name="engagement"),
    path(
        "engagements/<int:engagement_id>/documents/",
        engagements.documents_status,
        name="engagement-documents",
    ),
    path("engagements/<int:engagement_id>/upload/", upload.upload, name="engagement-upload"),
    path("engagements/<int:engagement_id>/grid/", grid.grid, name="engagement-grid"),
    path("engagements/<int:engagement_id>/grid.xlsx", grid.grid_export, name="engagement-grid-export"),
    path("engagements/<int:engagement_id>/compare/", compare.compare_page, name="engagement-compare"),
    path(
        "engagements/<int:engagement_id>/compare/<int:type_id>/",
        compare.compare_page,
        name="engagement-compare-type",
    ),
    path(
        "engagements/<int:engagement_id>/compare/<int:type_id>/accept/",
        compare.accept_group,
        name="compare-accept",
    ),
    path("engagements/<int:engagement_id>/search/", search.search_page, name="engagement-search"),
    path("engagements/<int:engagement_id>/members/", members.members, name="engagement-members"),
    path("engagements/<int:engagement_id>/progress/", progress.progress, name="engagement-progress"),
    path("engagements/<int:engagement_id>/catalog/", engagement_catalog.catalog, name="engagement-catalog"),
    path(
        "engagements/<int:engagement_id>/catalog/<int:type_id>/edit/",
        engagement_catalog.edit,
        name="engagement-catalog-edit",
    ),
    path(
        "engagements/<int:engagement_id>/catalog/<int:type_id>/retire/",
        engagement_catalog.retire,
        name="engagement-catalog-retire",
    ),
    path(
        "engagements/<int:engagement_id>/export.<fmt:fmt>",
        exports.engagement_export,
        name="engagement-export",
    ),
    path("documents/<int:document_id>/", review.document, name="document"),
    path("documents/<int:document_id>/delete/", deletion.delete, name="document-delete"),
    path("documents/<int:document_id>/type/", doc_type.change_type, name="document-type"),
    path("documents/<int:document_id>/title/", doc_title.rename, name="document-title"),
    path("documents/<int:document_id>/file", engagements.document_file, name="document-file"),
    path("documents/<int:document_id>/clauses/", review.document_clauses, name="document-clauses"),
    path("documents/<int:document_id>/pages/<int:number>/", review.document_page, name="document-page"),
    path(
        "documents/<int:document_id>/pages/<int:number>/w<int:width>.png", pages.page_image, name="page-image"
    ),
    path(
        "documents/<int:document_id>/citations/<int:citation_id>/pages/<int:number>/w<int:width>.png",
        pages.citation_page_image,
        name="citation-page-image",
    ),
    path(
        "documents/<int:document_id>/citations/<int:citation_id>/boxes.json",
        pages.citation_boxes,
        name="citation-boxes",
    ),
    path(
        "documents/<int:document_id>/clauses/<int:extraction_id>/closest/boxes.json",
        pages.closest_boxes,
        name="closest-boxes",
    ),
    path(
        "documents/<int:document_id>/clauses/<int:extraction_id>/correction/boxes.json",
        pages.correction_boxes,
        name="correction-boxes",
    ),
    path("documents/<int:document_id>/original.pdf", pages.original, name="document-original"),
    path("documents/<int:document_id>/find/", find.find, name="find"),
    path("documents/<int:document_id>/summary/", summary.summary, name="document-summary"),
    path("documents/<int:document_id>/export.<fmt:fmt>", exports.document_export, name="document-export"),
    path("runs/<int:run_id>/export.<fmt:fmt>", exports.run_export, name="run-export"),
    path("documents/<int:document_id>/clauses/<int:extraction_id>/", review.clause, name="clause"),
    path(
        "documents/<int:document_id>/clauses/<int:extraction_id>/pages/<int:number>/",
        review.clause_page,
        name="clause-page",
    ),
    path(
        "documents/<int:document_id>/clauses/<int:extraction_id>/citations/<int:citation_id>/",
        review.citation,
        name="citation",
    ),
    path("documents/<int:document_id>/clauses/<int:extraction_id>/decide/", review.decide, name="decide"),
]
