// The device key, libcrypto, SHA-256 and RFC 8785 canonical JSON are shared with generation receipts
// (Sources/SanadSigning); they are re-exported so that the plugin's users keep reaching them through it.
@_exported import SanadSigning

/// libcrypto's streaming SHA-256 digests the canonical input messages.
extension SHA256Digest: InputDigest {}
