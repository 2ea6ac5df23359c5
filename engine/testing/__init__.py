"""agrad.testing: gradient checks shipped with the package (used by the tests and `agrad check`)."""
from .gradcheck import (
    GradcheckError,
    JacobianReport,
    gradcheck,
    gradcheck_report,
    gradgradcheck,
)

__all__ = ["gradcheck", "gradgradcheck", "gradcheck_report", "JacobianReport", "GradcheckError"]
