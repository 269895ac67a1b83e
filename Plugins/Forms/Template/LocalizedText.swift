/// A text in each language a template supports: `{"en": "Full name", "ar": "الاسم الكامل", "es": "Nombre completo"}`.
public struct LocalizedText: Sendable, Equatable {
    public var values: [String: String]

    public init(_ values: [String: String]) { self.values = values }

    /// The text in `language`, else English, else any language the template has.
    public func text(_ language: String) -> String {
        values[language] ?? values["en"] ?? values.keys.sorted().first.flatMap { values[$0] } ?? ""
    }
}
