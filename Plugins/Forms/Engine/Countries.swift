import Foundation
import SanadChat
import SanadCore

/// The ISO 3166-1 countries (`Resources/Templates/countries.json`, written by `scripts/gen-countries` from Debian's
/// iso-codes): an answer to a `country` field is an alpha-3 or alpha-2 code in any case, a name (official or common)
/// in English, Arabic or Spanish, or an ICAO machine-readable-zone code (`D`); its normal form is the alpha-3 code.
public struct Countries: Sendable {
    public struct Country: Sendable {
        public var code: String
        public var names: [String: String]
    }

    public let countries: [String: Country]
    /// Where the table comes from and its version, for messages and the README.
    public let source: String
    public let asOf: String
    let byKey: [String: String]

    /// The shipped table, read once; nil when the resource is missing or damaged (`loadError` says why).
    public static let shipped: Result<Countries, FormError> = {
        guard let dir = FormCatalog.bundledDirectory else {
            return .failure(
                .store("the country table (countries.json) is not next to the sanad executable; rebuild it"))
        }
        return Result { try Countries(file: dir.appendingPathComponent("countries.json")) }.mapError {
            $0 as? FormError ?? .store("\($0)")
        }
    }()

    public init(file: URL) throws {
        func bad(_ problem: String) -> FormError {
            .invalidTemplate(file: file.lastPathComponent, keyPath: "", problem: problem)
        }
        guard let data = FileManager.default.contents(atPath: file.path) else { throw bad("cannot be read") }
        let root: JSONValue
        do { root = try StrictJSON(maximumBytes: 4 << 20).parse(Array(data)) } catch { throw bad("\(error)") }
        guard let list = root["countries"]?.arrayValue, let source = root["source"]?.stringValue,
            let asOf = root["asOf"]?.stringValue
        else { throw bad("expected 'countries', 'source' and 'asOf'") }
        var countries: [String: Country] = [:]
        var byKey: [String: String] = [:]
        for (i, item) in list.enumerated() {
            guard let code = item["code"]?.stringValue, code.count == 3, let en = item["en"]?.stringValue else {
                throw bad("countries[\(i)]: expected 'code' (3 letters) and 'en'")
            }
            var names = ["en": en]
            for lang in ["ar", "es"] { names[lang] = item[lang]?.stringValue }
            countries[code] = Country(code: code, names: names)
            var keys: [String] = [code, item["alpha2"]?.stringValue ?? ""]
            keys.append(contentsOf: names.values)
            keys.append(contentsOf: item["aliases"]?.arrayValue?.compactMap(\.stringValue) ?? [])
            for key in keys where !key.isEmpty { byKey[Self.key(key)] = code }
        }
        if let icao = root["icaoCodes"]?["codes"]?.objectValue {
            for (mrz, code) in icao { if let c = code.stringValue, countries[c] != nil { byKey[Self.key(mrz)] = c } }
        }
        self.countries = countries
        self.byKey = byKey
        self.source = source
        self.asOf = asOf
    }

    /// The alpha-3 code `text` names, or nil.
    public func code(_ text: String) -> String? { byKey[Self.key(text)] }

    /// The country's name in `language` (English when the table has none).
    public func name(_ code: String, language: String) -> String? {
        countries[code].flatMap { $0.names[language] ?? $0.names["en"] }
    }

    static let articles: Set<String> = ["the", "of", "de", "la", "el"]

    /// Names compared: Arabic letter forms and marks folded, case and accents folded, punctuation dropped, and a
    /// leading article (`the`, `ال`) dropped from each word.
    static func key(_ text: String) -> String {
        let folded = normalizeArabic(text).folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
        var words: [Substring] = []
        for word in folded.split(whereSeparator: { !$0.isLetter && !$0.isNumber }) {
            if Self.articles.contains(String(word)) { continue }
            words.append(word.hasPrefix("ال") && word.count > 3 ? word.dropFirst(2) : word)
        }
        return words.joined(separator: " ")
    }
}
