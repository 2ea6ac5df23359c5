"""agrad.testing: the gradient checks shipped with the package (used by the tests and `agrad check`);
they live in agrad.autograd.gradcheck, as torch.autograd.gradcheck does."""
from ..autograd.gradcheck import (
    GradcheckError,
    JacobianReport,
    gradcheck,
    gradcheck_report,
    gradgradcheck,
)

__all__ = ["gradcheck", "gradgradcheck", "gradcheck_report", "JacobianReport", "GradcheckError"]
