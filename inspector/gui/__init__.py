"""The desktop app: Qt views and controllers over `inspector.core`. Views take the session model and
subscribe to it; long work runs off the UI thread; the window only wires views together."""
