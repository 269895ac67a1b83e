import Foundation

/// The form templates: every `*.form.json` in a folder (by default the templates shipped in this plugin's
/// resources), read strictly.
public struct FormCatalog: Sendable {
    public let directory: URL
    public let templates: [FormTemplate]

    /// Reads every `*.form.json` in `directory`; the first invalid template is an error naming its file and key.
    public init(directory: URL) throws {
        self.directory = directory
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: directory.path) } catch {
            throw FormError.store("\(directory.path): the templates folder cannot be read")
        }
        templates = try names.filter { $0.hasSuffix(".form.json") }.sorted().map {
            try TemplateReader.load(directory.appendingPathComponent($0))
        }
    }

    /// The shipped templates.
    public static func bundled() throws -> FormCatalog {
        guard let dir = bundledDirectory else {
            throw FormError.store(
                "the form templates (Sanad_FormsPlugin.resources/Templates) are not next to the sanad executable; rebuild it"
            )
        }
        return try FormCatalog(directory: dir)
    }

    /// The shipped templates folder, found without `Bundle.module` (which stops the process when the bundle is
    /// missing): next to the executable, else in the source tree.
    public static var bundledDirectory: URL? {
        let bundleName = "Sanad_FormsPlugin.resources"
        var candidates = [
            Bundle.main.bundleURL.appendingPathComponent(bundleName),
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(bundleName),
        ]
        if let r = Bundle.main.resourceURL { candidates.append(r.appendingPathComponent(bundleName)) }
        for dir in candidates {
            for path in ["Resources/Templates", "Templates"] {
                let url = dir.appendingPathComponent(path)
                if FileManager.default.fileExists(atPath: url.appendingPathComponent("README.md").path) { return url }
            }
        }
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Resources/Templates")
        return FileManager.default.fileExists(atPath: source.path) ? source : nil
    }

    public func template(_ id: String) throws -> FormTemplate {
        guard let t = templates.first(where: { $0.metadata.id == id }) else {
            throw FormError.unknownTemplate(id: id, known: templates.map(\.metadata.id))
        }
        return t
    }
}
