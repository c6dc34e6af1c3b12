from django.apps import AppConfig


class JobsConfig(AppConfig):
    name = "benchhub.jobs"
    label = "jobs"

    def ready(self) -> None:
        from benchhub.jobs.services import job_upload_check
        from benchhub.results.hooks import job_check_register

        # An upload that names a job is stored only under the job's live attempt.
        job_check_register(job_upload_check)
