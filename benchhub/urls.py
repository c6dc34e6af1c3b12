"""Top-level URLs: pages, the admin, and the API (its operations under /api/v1/ are listed here,
so api/ stays plumbing that the apps use and never imports them)."""

from django.contrib import admin
from django.urls import include, path

from benchhub.accounts.api import TokenDetailView, TokensView
from benchhub.bisections.api import (
    BisectionCancelView,
    BisectionDetailView,
    BisectionsView,
    JobRangeView,
)
from benchhub.builds.api import BuildsView, RecipeDetailView, RecipePatchesView, RecipesView
from benchhub.compare.api import CompareSettleView, CompareView
from benchhub.hosts.api import HostGrantDetailView, HostGrantsView, HostSpoolReportView, HostsView
from benchhub.jobs.api import (
    JobCancelView,
    JobClaimView,
    JobDetailView,
    JobFinishView,
    JobHeartbeatView,
    JobReleaseView,
    JobsView,
    ScheduleDetailView,
    SchedulesView,
    StatusView,
)
from benchhub.regressions.api import (
    AlertGroupsView,
    DeliveriesView,
    RegressionDetailView,
    RegressionStateView,
    RegressionsView,
    SubscriptionDetailView,
    SubscriptionsView,
    WebhookDetailView,
    WebhooksView,
)
from benchhub.results.api import (
    ImportOutputsView,
    ImportSummaryView,
    RunDetailView,
    RunResultsView,
    RunsView,
)
from benchhub.results.texts_api import ResultOutputView, RunImportTextView
from benchhub.review.api import (
    ComparisonCommentsView,
    ReviewEventsView,
    RunCommentsView,
    RunMarksView,
    RunTagsView,
    RunTagView,
)
from benchhub.workloads.api import CatalogEntryView, CatalogView

api_v1 = [
    path("runs/", RunsView.as_view(), name="api-runs"),
    path("runs/<uuid:run_uuid>/", RunDetailView.as_view(), name="api-run"),
    path("runs/<uuid:run_uuid>/results/", RunResultsView.as_view(), name="api-run-results"),
    path(
        "runs/<uuid:run_uuid>/import-text/", RunImportTextView.as_view(), name="api-run-import-text"
    ),
    path(
        "runs/<uuid:run_uuid>/results/<int:result_id>/output/",
        ResultOutputView.as_view(),
        name="api-result-output",
    ),
    path("imports/outputs/", ImportOutputsView.as_view(), name="api-import-outputs"),
    path("imports/summary/", ImportSummaryView.as_view(), name="api-import-summary"),
    path("builds/", BuildsView.as_view(), name="api-builds"),
    path("recipes/", RecipesView.as_view(), name="api-recipes"),
    path("recipes/<str:name>/", RecipeDetailView.as_view(), name="api-recipe"),
    path("recipes/<str:name>/patches/", RecipePatchesView.as_view(), name="api-recipe-patches"),
    path("compare/", CompareView.as_view(), name="api-compare"),
    path("compare/settle/", CompareSettleView.as_view(), name="api-compare-settle"),
    path("hosts/", HostsView.as_view(), name="api-hosts"),
    path("hosts/spool/", HostSpoolReportView.as_view(), name="api-host-spool"),
    path("hosts/<str:host_name>/grants/", HostGrantsView.as_view(), name="api-host-grants"),
    path(
        "hosts/<str:host_name>/grants/<int:grant_id>/",
        HostGrantDetailView.as_view(),
        name="api-host-grant",
    ),
    path("jobs/", JobsView.as_view(), name="api-jobs"),
    path("jobs/claim/", JobClaimView.as_view(), name="api-job-claim"),
    path("jobs/<int:job_id>/", JobDetailView.as_view(), name="api-job"),
    path("jobs/<int:job_id>/cancel/", JobCancelView.as_view(), name="api-job-cancel"),
    path("jobs/<int:job_id>/heartbeat/", JobHeartbeatView.as_view(), name="api-job-heartbeat"),
    path("jobs/<int:job_id>/finish/", JobFinishView.as_view(), name="api-job-finish"),
    path("jobs/<int:job_id>/release/", JobReleaseView.as_view(), name="api-job-release"),
    path("jobs/<int:job_id>/range/", JobRangeView.as_view(), name="api-job-range"),
    path("bisections/", BisectionsView.as_view(), name="api-bisections"),
    path("bisections/<int:bisection_id>/", BisectionDetailView.as_view(), name="api-bisection"),
    path(
        "bisections/<int:bisection_id>/cancel/",
        BisectionCancelView.as_view(),
        name="api-bisection-cancel",
    ),
    path("schedules/", SchedulesView.as_view(), name="api-schedules"),
    path("schedules/<int:schedule_id>/", ScheduleDetailView.as_view(), name="api-schedule"),
    path("workloads/catalog/", CatalogView.as_view(), name="api-catalog"),
    path("workloads/catalog/<str:entry_id>/", CatalogEntryView.as_view(), name="api-catalog-entry"),
    path("tokens/", TokensView.as_view(), name="api-tokens"),
    path("tokens/<str:prefix>/", TokenDetailView.as_view(), name="api-token"),
    path("status/", StatusView.as_view(), name="api-status"),
    path("runs/<uuid:run_uuid>/comments/", RunCommentsView.as_view(), name="api-run-comments"),
    path("runs/<uuid:run_uuid>/tags/", RunTagsView.as_view(), name="api-run-tags"),
    path("runs/<uuid:run_uuid>/tags/<str:name>/", RunTagView.as_view(), name="api-run-tag"),
    path("runs/<uuid:run_uuid>/marks/", RunMarksView.as_view(), name="api-run-marks"),
    path("comparisons/comments/", ComparisonCommentsView.as_view(), name="api-comparison-comments"),
    path("review/events/", ReviewEventsView.as_view(), name="api-review-events"),
    path("regressions/", RegressionsView.as_view(), name="api-regressions"),
    path("regressions/groups/", AlertGroupsView.as_view(), name="api-alert-groups"),
    path(
        "regressions/<int:regression_id>/",
        RegressionDetailView.as_view(),
        name="api-regression",
    ),
    path(
        "regressions/<int:regression_id>/state/",
        RegressionStateView.as_view(),
        name="api-regression-state",
    ),
    path("regressions/subscriptions/", SubscriptionsView.as_view(), name="api-subscriptions"),
    path(
        "regressions/subscriptions/<int:subscription_id>/",
        SubscriptionDetailView.as_view(),
        name="api-subscription",
    ),
    path("regressions/webhooks/", WebhooksView.as_view(), name="api-webhooks"),
    path("regressions/webhooks/<int:webhook_id>/", WebhookDetailView.as_view(), name="api-webhook"),
    path("regressions/deliveries/", DeliveriesView.as_view(), name="api-deliveries"),
]

urlpatterns = [
    path("", include("benchhub.dashboard.urls")),
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    path("api/", include("benchhub.api.urls")),
]

handler404 = "benchhub.api.views.not_found"
handler500 = "benchhub.api.views.server_error"
