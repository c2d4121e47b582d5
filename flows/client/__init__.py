"""The HTTP client of ``sortie server`` (``http``): one method per endpoint, coded errors back as exceptions.

``flows.authority.remote.RemoteAuthority`` is built on it; callers use the ``Authority`` interface.
"""
