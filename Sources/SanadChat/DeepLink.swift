/// A link from a chat message to a screen of the app, carrying the context the screen needs.
///
/// JSON form (inside a chat message): `{"serviceType": …, "title": …, "alertId": …}`.
/// URL form (in a product's `DeepLinkFormat`): `SCHEME://HOST/<serviceType>?alert=<alertId>&title=<title>` with every value percent-encoded as
/// UTF-8 (only `A–Z a–z 0–9 - . _ ~` are left as they are); `title` is left out when it is empty.
/// `DeepLink(url:format:)` and `url(_:)` round-trip: `DeepLink(url: link.url(f), format: f) == link` for every link,
/// and `DeepLink(url: s, format: f).url(f) == s` for every URL this type writes. An invalid URL throws `ChatError.invalidDeepLink`.
public struct DeepLink: Sendable, Codable, Equatable, Hashable {
    /// What the link opens: a service (`driving_license_renewal`) or a page (`dependents`). Lower-case letters,
    /// digits and `_`.
    public var serviceType: String
    /// What the link is about, in the user's words (`رخصة قيادتك على وشك الانتهاء`).
    public var title: String
    /// The alert (or record) the destination shows; empty for a link about no alert, written `"alertId": null`
    /// in JSON as the specification writes it (and read back from `null` or a missing key).
    public var alertId: String

    public init(serviceType: String, title: String, alertId: String) {
        self.serviceType = serviceType
        self.title = title
        self.alertId = alertId
    }

    enum CodingKeys: String, CodingKey { case serviceType, title, alertId }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        serviceType = try c.decode(String.self, forKey: .serviceType)
        title = try c.decode(String.self, forKey: .title)
        alertId = try c.decodeIfPresent(String.self, forKey: .alertId) ?? ""
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(serviceType, forKey: .serviceType)
        try c.encode(title, forKey: .title)
        if alertId.isEmpty { try c.encodeNil(forKey: .alertId) } else { try c.encode(alertId, forKey: .alertId) }
    }

    /// The URL form in `format`, e.g. `app://service/driving_license_renewal?alert=dl-1&title=%D8%B1…`.
    public func url(_ format: DeepLinkFormat) -> String {
        var text = "\(format.scheme)://\(format.host)/\(percentEncode(serviceType))?alert=\(percentEncode(alertId))"
        if !title.isEmpty { text += "&title=" + percentEncode(title) }
        return text
    }

    /// Parses the URL form. Throws `ChatError.invalidDeepLink` naming the problem: another scheme or host, a
    /// missing or malformed service type, a missing `alert`, an unknown or repeated parameter, bad percent-encoding.
    public init(url text: String, format: DeepLinkFormat) throws {
        func fail(_ problem: String) -> ChatError {
            .invalidDeepLink(url: text, problem: "\(problem); expected \(format.pattern)")
        }
        let prefix = "\(format.scheme)://\(format.host)/"
        guard text.hasPrefix(prefix) else {
            if let schemeEnd = text.range(of: "://") {
                let scheme = text[..<schemeEnd.lowerBound]
                if scheme != format.scheme { throw fail("the scheme is '\(scheme)', not '\(format.scheme)'") }
                throw fail("the host must be '\(format.host)'")
            }
            throw fail("it does not start with '\(prefix)'")
        }
        let rest = text.dropFirst(prefix.count)
        let pathPart: Substring
        let queryPart: Substring
        if let q = rest.firstIndex(of: "?") {
            pathPart = rest[..<q]
            queryPart = rest[rest.index(after: q)...]
        } else {
            pathPart = rest
            queryPart = ""
        }
        guard let serviceType = percentDecode(pathPart) else {
            throw fail("the service type is not valid percent-encoding")
        }
        guard !serviceType.isEmpty else { throw fail("the service type is missing") }
        guard DeepLink.isValidServiceType(serviceType) else {
            throw fail("the service type '\(serviceType)' may only hold a–z, 0–9 and _")
        }
        var alert: String?
        var title: String?
        if !queryPart.isEmpty {
            for pair in queryPart.split(separator: "&", omittingEmptySubsequences: false) {
                guard let eq = pair.firstIndex(of: "=") else { throw fail("the parameter '\(pair)' has no '='") }
                let name = pair[..<eq]
                guard let value = percentDecode(pair[pair.index(after: eq)...]) else {
                    throw fail("the value of '\(name)' is not valid percent-encoding")
                }
                switch name {
                case "alert":
                    guard alert == nil else { throw fail("'alert' is given twice") }
                    alert = value
                case "title":
                    guard title == nil else { throw fail("'title' is given twice") }
                    title = value
                default:
                    throw fail("unknown parameter '\(name)'; the parameters are alert and title")
                }
            }
        }
        guard let alert, !alert.isEmpty else { throw fail("the 'alert' parameter is missing or empty") }
        self.init(serviceType: serviceType, title: title ?? "", alertId: alert)
    }

    /// Whether `text` is a valid service type: non-empty, only `a–z`, `0–9` and `_`.
    public static func isValidServiceType(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F }
    }
}

/// RFC 3986 percent-encoding of UTF-8, keeping only the unreserved characters.
func percentEncode(_ text: String) -> String {
    let hex = Array("0123456789ABCDEF".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(text.utf8.count)
    for byte in text.utf8 {
        let unreserved =
            (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
            || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
        if unreserved {
            out.append(byte)
        } else {
            out.append(0x25)
            out.append(hex[Int(byte >> 4)])
            out.append(hex[Int(byte & 0xF)])
        }
    }
    return String(decoding: out, as: UTF8.self)
}

/// Decodes `%XX` escapes; nil for a truncated or non-hex escape or bytes that are not UTF-8. Other characters are
/// taken as they are.
func percentDecode(_ text: Substring) -> String? {
    var bytes: [UInt8] = []
    let utf8 = Array(text.utf8)
    var i = 0
    func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        case 0x61...0x66: return c - 0x61 + 10
        default: return nil
        }
    }
    while i < utf8.count {
        if utf8[i] == 0x25 {
            guard i + 2 < utf8.count, let hi = hexValue(utf8[i + 1]), let lo = hexValue(utf8[i + 2]) else { return nil }
            bytes.append(hi << 4 | lo)
            i += 3
        } else {
            bytes.append(utf8[i])
            i += 1
        }
    }
    let text = String(decoding: bytes, as: UTF8.self)
    return Array(text.utf8) == bytes ? text : nil
}

/// The scheme and host of a product's deep link URLs (`app://service/…`).
public struct DeepLinkFormat: Sendable, Equatable, Hashable {
    /// The URL scheme (`app`).
    public var scheme: String
    /// The URL host (`service`).
    public var host: String

    public init(scheme: String, host: String = "service") {
        self.scheme = scheme
        self.host = host
    }

    /// A neutral format for hosts that name none (`sanad://service/…`).
    public static let standard = DeepLinkFormat(scheme: "sanad")

    /// What a valid URL looks like, for error messages: `SCHEME://HOST/<serviceType>?alert=<alertId>[&title=<title>]`.
    public var pattern: String { "\(scheme)://\(host)/<serviceType>?alert=<alertId>[&title=<title>]" }
}
