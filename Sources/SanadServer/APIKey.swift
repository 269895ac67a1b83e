/// Whether `header` (an Authorization value) is `Bearer KEY`, compared in time that does not depend on where the
/// bytes differ (only on the lengths), so the key cannot be guessed byte by byte from response times.
public func bearerMatches(_ header: String?, key: String) -> Bool {
    guard let header, header.count > 7, header.prefix(7).lowercased() == "bearer " else { return false }
    return constantTimeEqual(Array(header.dropFirst(7).utf8), Array(key.utf8))
}

/// Byte equality that reads every byte of the longer input whatever the contents.
public func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    var difference = UInt8(a.count == b.count ? 0 : 1)
    for i in 0..<max(a.count, b.count) {
        difference |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0)
    }
    return difference == 0
}
