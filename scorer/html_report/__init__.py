"""clawbench-report: scored batches as one self-contained HTML page."""

from scorer.html_report.load import Report, ReportError, load_report
from scorer.html_report.render import render_report, write_report

__all__ = ["Report", "ReportError", "load_report", "render_report", "write_report"]
