"""What the queue announces to the apps above it, so that it never imports them.

`job_ended` (a Django signal, used only for this decoupling) is sent once a job has ended (done,
failed, cancelled or expired) and its transaction committed, with `job_id`, `state` and
`bisection_id` (None for a job of no bisection). The bisections app subscribes in its
AppConfig.ready(): a bisection takes its next step when one of its jobs ends.
"""

from django.dispatch import Signal

job_ended = Signal()
