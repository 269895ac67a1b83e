import Foundation
import SanadCore

/// A request to a plugin's place in the web app (`WebPlace`), as the server read it.
public struct WebRequest: Sendable {
    /// `GET` or `POST`.
    public var method: String
    /// The path without the query (`/forms/api/session`).
    public var path: String
    /// The query's parameters, decoded (`?id=ds-160-1a2b` → `["id": "ds-160-1a2b"]`).
    public var query: [String: String]
    /// The body (a JSON object for every `POST`: the server refuses other content types).
    public var body: [UInt8]

    public init(method: String, path: String, query: [String: String] = [:], body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.query = query
        self.body = body
    }
}

/// A place's answer: a page, JSON, or a file to download (`fileName` set: sent as an attachment).
public struct WebReply: Sendable {
    public var status: Int
    public var contentType: String
    public var body: [UInt8]
    /// The download's file name, for `Content-Disposition: attachment`.
    public var fileName: String?

    public init(status: Int = 200, contentType: String, body: [UInt8], fileName: String? = nil) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.fileName = fileName
    }

    /// A JSON reply.
    public static func json(_ value: JSONValue, status: Int = 200) -> WebReply {
        WebReply(status: status, contentType: "application/json", body: Array(value.jsonString.utf8))
    }

    /// An HTML page.
    public static func html(_ text: String) -> WebReply {
        WebReply(contentType: "text/html; charset=utf-8", body: Array(text.utf8))
    }
}

/// A plugin's place in the web app `sanad serve` hosts beside the chat (the forms): `GET prefix` is its page, and
/// every path under `prefix/` is its to answer (JSON calls, downloads). A `POST` reaches it only as JSON from this
/// server's own pages (the server checks the content type and the origin, and the API key when one is set).
public protocol WebPlace: Sendable {
    /// The path it owns (`/forms`).
    var prefix: String { get }
    /// Answers `request`; an error thrown is sent as a 400 with its text.
    func respond(to request: WebRequest) async throws -> WebReply
}

/// A page a plugin ships as a resource (`Resources/NAME` in its SwiftPM bundle, `Sanad_TARGET.resources`), found
/// without `Bundle.module` (which stops the process when the bundle is missing): next to the executable, else in
/// the plugin's source folder `sourceFolder` (a build run from its checkout). Nil when neither has it.
public func shippedWebPage(_ name: String, bundle: String, sourceFolder: URL) -> String? {
    var folders = [
        Bundle.main.bundleURL.appendingPathComponent(bundle),
        Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(bundle),
    ]
    if let r = Bundle.main.resourceURL { folders.append(r.appendingPathComponent(bundle)) }
    folders.append(sourceFolder)
    for folder in folders {
        for path in ["Resources/\(name)", name] {
            if let text = try? String(contentsOf: folder.appendingPathComponent(path), encoding: .utf8) { return text }
        }
    }
    return nil
}
