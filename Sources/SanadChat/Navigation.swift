import SanadCore

/// A screen of the app that a deep link opens, with the context it was opened with. The CLI renders it as text
/// (`text`); tools return it as JSON (`json`).
public struct Destination: Sendable, Equatable, Codable {
    /// A labelled value on a screen.
    public struct Field: Sendable, Equatable, Codable {
        public var label: String
        public var value: String

        public init(_ label: String, _ value: String) {
            self.label = label
            self.value = value
        }
    }

    /// A group of fields (one record of a list page, or the whole of a detail page).
    public struct Section: Sendable, Equatable, Codable {
        public var heading: String?
        public var fields: [Field]

        public init(heading: String? = nil, fields: [Field]) {
            self.heading = heading
            self.fields = fields
        }
    }

    /// Which screen, as a stable id (`dashboard`, `dependents`).
    public var screen: String
    /// The screen's title as shown.
    public var title: String
    /// The link that opened it, unchanged.
    public var link: DeepLink
    public var sections: [Section]
    /// Remarks shown under the sections (for example records left out because fields were missing).
    public var notes: [String]

    public init(screen: String, title: String, link: DeepLink, sections: [Section], notes: [String] = []) {
        self.screen = screen
        self.title = title
        self.link = link
        self.sections = sections
        self.notes = notes
    }

    /// The screen as text, one field per line; the link in `format`.
    public func text(_ format: DeepLinkFormat) -> String {
        var lines = ["══ \(title) ══"]
        for section in sections {
            if let heading = section.heading { lines.append("• \(heading)") }
            let indent = section.heading == nil ? "" : "    "
            for field in section.fields { lines.append("\(indent)\(field.label): \(field.value)") }
        }
        for note in notes { lines.append("※ \(note)") }
        lines.append("(\(screen) ← \(link.url(format)))")
        return lines.joined(separator: "\n")
    }

    /// `{"screen", "title", "link": {…, "url"}, "sections": [{"heading", "fields": [{"label","value"}]}], "notes"}`.
    public func json(_ format: DeepLinkFormat) -> JSONValue {
        .object([
            "screen": .string(screen), "title": .string(title),
            "link": .object([
                "serviceType": .string(link.serviceType), "title": .string(link.title),
                "alertId": link.alertId.isEmpty ? .null : .string(link.alertId),
                "url": .string(link.url(format)),
            ]),
            "sections": .array(
                sections.map { s in
                    .object([
                        "heading": s.heading.map(JSONValue.string) ?? .null,
                        "fields": .array(
                            s.fields.map { .object(["label": .string($0.label), "value": .string($0.value)]) }),
                    ])
                }),
            "notes": .array(notes.map(JSONValue.string)),
        ])
    }
}

/// Asks each plugin in turn for the screen of `link`, in `language`; the first that claims the link decides. Throws
/// `ChatError.navigationFailed` when none claims it or the one that does refuses.
public func navigate(
    _ link: DeepLink, plugins: [any FeaturePlugin], language: ChatLanguage = .arabic
) async throws -> Destination {
    for plugin in plugins {
        do {
            if let destination = try await plugin.destination(for: link, in: language) { return destination }
        } catch let error as ChatError {
            throw error
        } catch {
            throw ChatError.navigationFailed(link: link, reason: "\(plugin.id): \(error)")
        }
    }
    throw ChatError.navigationFailed(
        link: link,
        reason: "no plugin opens links of type '\(link.serviceType)' (plugins: "
            + "\(plugins.map(\.id).joined(separator: ", ")))")
}

/// The host's own tool: follows a deep link URL through the plugins and returns the destination screen.
public struct OpenDeepLinkTool: Tool {
    let plugins: [any FeaturePlugin]
    /// The product's link URLs.
    let format: DeepLinkFormat

    public init(plugins: [any FeaturePlugin], format: DeepLinkFormat) {
        self.plugins = plugins
        self.format = format
    }

    public var name: String { "open_deep_link" }
    public var description: String {
        "Opens a deep link (\(format.pattern)) and returns the screen it leads to."
    }
    public var argumentsSchema: JSONValue {
        .object([
            "type": .string("object"),
            "properties": .object([
                "url": .object(["type": .string("string"), "description": .string(format.pattern)])
            ]),
            "required": .array([.string("url")]),
            "additionalProperties": .bool(false),
        ])
    }

    public func call(_ arguments: JSONValue) async throws -> JSONValue {
        let url = try ToolArguments(tool: name, arguments, allowed: ["url"]).string("url")
        let link: DeepLink
        do {
            link = try DeepLink(url: url, format: format)
        } catch {
            throw ToolError(tool: name, "\(error)")
        }
        do {
            return try await navigate(link, plugins: plugins).json(format)
        } catch {
            throw ToolError(tool: name, "\(error)")
        }
    }
}
