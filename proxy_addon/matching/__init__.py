"""The one matcher (SPEC section 3), used by the live addon and the offline scorer: canonical
URLs (`urls`), bodies and queries (`bodies`), secret redaction (`redact`), the verdict with its
reasons (`matcher`)."""
