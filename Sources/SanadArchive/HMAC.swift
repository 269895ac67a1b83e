/// HMAC-SHA-256 (RFC 2104) of `message` under `key`: the keyed digest of form backups, which a forger who
/// recomputes the plain SHA-256 digests cannot make without the key.
public func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
    let blockSize = 64
    var block = key.count > blockSize ? sha256(key) : key
    block += [UInt8](repeating: 0, count: blockSize - block.count)
    let inner = sha256(block.map { $0 ^ 0x36 } + message)
    return sha256(block.map { $0 ^ 0x5c } + inner)
}

/// Compares two digests in time that does not depend on where they first differ.
public func digestsEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    return zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
}
