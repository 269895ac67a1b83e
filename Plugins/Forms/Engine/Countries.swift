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
    /// Alpha-3, alpha-2 and ICAO codes, upper case, to the alpha-3 code.
    let byCode: [String: String]
    /// Names by `placeNameKey`.
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
        var byCode: [String: String] = [:]
        for (i, item) in list.enumerated() {
            guard let code = item["code"]?.stringValue, code.count == 3, let en = item["en"]?.stringValue else {
                throw bad("countries[\(i)]: expected 'code' (3 letters) and 'en'")
            }
            var names = ["en": en]
            for lang in ["ar", "es"] { names[lang] = item[lang]?.stringValue }
            countries[code] = Country(code: code, names: names)
            byCode[code] = code
            if let alpha2 = item["alpha2"]?.stringValue { byCode[alpha2] = code }
            var keys = Array(names.values)
            keys.append(contentsOf: item["aliases"]?.arrayValue?.compactMap(\.stringValue) ?? [])
            for key in keys where !key.isEmpty { byKey[placeNameKey(key)] = code }
        }
        for (mrz, code) in root["icaoCodes"]?["codes"]?.objectValue ?? [:] {
            if let c = code.stringValue, countries[c] != nil { byCode[mrz] = c }
        }
        self.countries = countries
        self.byCode = byCode
        self.byKey = byKey
        self.source = source
        self.asOf = asOf
    }

    /// The alpha-3 code `text` names, or nil.
    public func code(_ text: String) -> String? {
        byCode[text.trimmingCharacters(in: .whitespaces).uppercased()] ?? byKey[placeNameKey(text)]
    }

    /// The country's name in `language` (English when the table has none).
    public func name(_ code: String, language: String) -> String? {
        countries[code].flatMap { $0.names[language] ?? $0.names["en"] }
    }
}
