"""The one matcher (docs/formats.md, "Matching"), used by the live addon and the offline scorer:
canonical URLs (`urls`), bodies and queries (`bodies`, Content-Encoding in `encoding`), secret
redaction (`redact`), what servers route to the commit although the exact rule misses it
(`equivalence`), the verdict with its reasons (`matcher`)."""
