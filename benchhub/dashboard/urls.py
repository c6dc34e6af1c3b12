from django.contrib.auth import views as auth_views
from django.urls import path

from benchhub.accounts.forms import LoginForm
from benchhub.dashboard import (
    views,
    views_bisections,
    views_compare,
    views_experiments,
    views_hosts,
    views_imports,
    views_jobs,
    views_recipes,
    views_regressions,
    views_review,
    views_runs,
    views_workloads,
)

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("runs/", views_runs.run_list, name="runs"),
    path("runs/<uuid:run_uuid>/", views_runs.run_detail, name="run"),
    path("import/", views_imports.import_outputs, name="import-outputs"),
    path("import/summary/", views_imports.import_summary, name="import-summary"),
    path("compare/", views_compare.compare, name="compare"),
    path("docs/statistics/", views.docs_statistics, name="docs-statistics"),
    path("compare/settle/", views_compare.compare_settle, name="compare-settle"),
    path("hosts/", views_hosts.host_list, name="hosts"),
    path("hosts/<str:name>/", views_hosts.host_detail, name="host"),
    path("history/", views_compare.history, name="history"),
    path("experiments/", views_experiments.experiment_list, name="experiments"),
    path(
        "experiments/<slug:experiment_id>/",
        views_experiments.experiment_detail,
        name="experiment",
    ),
    path("jobs/", views_jobs.job_list, name="jobs"),
    path("bisections/", views_bisections.bisection_list, name="bisections"),
    path("bisections/new/", views_bisections.bisection_new, name="bisection-new"),
    path("bisections/<int:bisection_id>/", views_bisections.bisection_detail, name="bisection"),
    path(
        "bisections/<int:bisection_id>/cancel/",
        views_bisections.bisection_cancel,
        name="bisection-cancel",
    ),
    path("workloads/", views_workloads.workload_catalog, name="workloads"),
    path("recipes/", views_recipes.recipes, name="recipes"),
    path("jobs/new/", views_jobs.job_new, name="job-new"),
    path("jobs/<int:job_id>/", views_jobs.job_detail, name="job"),
    path("jobs/<int:job_id>/cancel/", views_jobs.job_cancel, name="job-cancel"),
    path(
        "accounts/login/", auth_views.LoginView.as_view(authentication_form=LoginForm), name="login"
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("runs/<uuid:run_uuid>/requeue/", views_runs.run_requeue, name="run-requeue"),
    path("diff/", views_runs.run_diff, name="diff"),
    path("runs/<uuid:run_uuid>/comments/", views_review.run_comment_add, name="run-comment-add"),
    path("runs/<uuid:run_uuid>/tags/", views_review.run_tag_add, name="run-tag-add"),
    path("runs/<uuid:run_uuid>/tags/remove/", views_review.run_tag_remove, name="run-tag-remove"),
    path("runs/<uuid:run_uuid>/marks/", views_review.run_mark, name="run-mark"),
    path("review/comments/", views_review.comparison_comment_add, name="comparison-comment-add"),
    path("review/", views_review.review_events, name="review-events"),
    path("regressions/", views_regressions.regression_list, name="regressions"),
    path(
        "regressions/<int:regression_id>/",
        views_regressions.regression_detail,
        name="regression",
    ),
    path(
        "regressions/<int:regression_id>/state/",
        views_regressions.regression_state,
        name="regression-state",
    ),
    path("regressions/subscriptions/", views_regressions.subscriptions, name="subscriptions"),
    path(
        "regressions/subscriptions/add/",
        views_regressions.subscription_add,
        name="subscription-add",
    ),
    path(
        "regressions/subscriptions/<int:subscription_id>/remove/",
        views_regressions.subscription_remove,
        name="subscription-remove",
    ),
    path("regressions/webhooks/add/", views_regressions.webhook_add, name="webhook-add"),
    path(
        "regressions/webhooks/<int:webhook_id>/remove/",
        views_regressions.webhook_remove,
        name="webhook-remove",
    ),
]
