import Foundation
import SanadChat
import SanadCore

/// A form the product offers in the chat, and to whom (the forms plugin's `offer` option): a template id, or
/// `{"template": ID, "when": {"userData": FILE, "path": "user.residence.country", "equals": "US"}}` to offer it only
/// when the person's data file has that value at that path (dots separate object keys). Without `offer`, every
/// template is offered.
struct FormOffer: Sendable, Equatable {
    var templateID: String
    /// The condition, already checked against the person's data: whether it held.
    var applies: Bool

    /// Reads the `offer` option (nil when absent), checking each template id against `catalog` and reading each
    /// `userData` file; an error names the config file, the key and the fix.
    static func read(_ options: PluginOptions, catalog: FormCatalog) throws -> [FormOffer]? {
        guard let raw = options.context.options["offer"] else { return nil }
        func fail(_ problem: String) -> any Error { options.fail("offer", problem) }
        guard case .array(let items) = raw else {
            throw fail("must be an array of template ids or {\"template\": ID, \"when\": {…}} objects")
        }
        let known = catalog.templates.map(\.metadata.id)
        return try items.enumerated().map { index, item in
            var id = item.stringValue
            var applies = true
            if case .object(let object) = item {
                id = object["template"]?.stringValue
                if let when = object["when"] { applies = try holds(when, options: options, at: index) }
            }
            guard let id, known.contains(id) else {
                throw fail("[\(index)]: name a template (one of \(known.joined(separator: ", ")))")
            }
            return FormOffer(templateID: id, applies: applies)
        }
    }

    /// Whether the person's data has `equals` at `path` (a missing file is an error; a missing key is false).
    static func holds(_ when: JSONValue, options: PluginOptions, at index: Int) throws -> Bool {
        guard case .object(let w) = when, let file = w["userData"]?.stringValue, let path = w["path"]?.stringValue,
            let expected = w["equals"]?.stringValue
        else {
            throw options.fail(
                "offer", "[\(index)].when: needs \"userData\" (a JSON file), \"path\" (a.b.c) and \"equals\" (text)")
        }
        let url =
            file.hasPrefix("/")
            ? URL(fileURLWithPath: file)
            : (options.context.configFile?.deletingLastPathComponent() ?? URL(fileURLWithPath: "."))
                .appendingPathComponent(file).standardizedFileURL
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw options.fail(
                "offer", "[\(index)].when.userData: cannot read \(url.path) (\(error.localizedDescription))")
        }
        guard var value = try? JSONValue.parse(data) else {
            throw options.fail("offer", "[\(index)].when.userData: \(url.path) is not JSON")
        }
        for key in path.split(separator: ".") {
            guard case .object(let object) = value, let next = object[String(key)] else { return false }
            value = next
        }
        return value.stringValue == expected
    }
}

extension FormsPlugin {
    /// The templates offered to this person, in the `offer` option's order (every template without it).
    public var offeredTemplates: [FormTemplate] {
        guard let offers else { return catalog.templates }
        return offers.filter(\.applies).compactMap { offer in
            catalog.templates.first { $0.metadata.id == offer.templateID }
        }
    }
}
