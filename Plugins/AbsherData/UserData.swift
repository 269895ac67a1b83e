import Foundation
import SanadChat
import SanadCore

/// The user's documents and dependents, read from the JSON file the host config names (`userData`).
///
/// ```json
/// {
///   "note": "free text, ignored",
///   "user": {"name": "عبدالله"},
///   "documents": [
///     {"id": "dl-1029", "type": "driving_license", "number": "1012345678", "expiryDate": "2027-01-06",
///      "renewalFeeSAR": 400}
///   ],
///   "dependents": [
///     {"id": "dep-1", "name": "حسام", "relationship": "ولدك", "service": "اصدار رخصة", "dueDate": "2026-12-22",
///      "en": {"name": "Hussam", "relationship": "your son", "service": "driving licence issue"}}
///   ]
/// }
/// ```
/// Documents are validated strictly (an unknown key, a wrong type, an unknown `type`, a repeated `id` or a date that
/// is not `YYYY-MM-DD` is an error naming the file and the key path). Dependents are kept as JSON here and read
/// by the dependents plugin, which skips entries with missing fields instead of failing.
public struct UserData: Sendable, Equatable {
    public var file: URL
    public var userName: String?
    public var documents: [UserDocument]
    /// The `dependents` array as it is in the file.
    public var dependents: [JSONValue]
    /// The complete dependents and every worker, with the documents they hold.
    public var household: [HouseholdMember]
    public var vehicles: [Vehicle]
    public var violations: [TrafficViolation]

    public init(
        file: URL, userName: String? = nil, documents: [UserDocument], dependents: [JSONValue] = [],
        household: [HouseholdMember] = [], vehicles: [Vehicle] = [], violations: [TrafficViolation] = []
    ) {
        self.file = file
        self.userName = userName
        self.documents = documents
        self.dependents = dependents
        self.household = household
        self.vehicles = vehicles
        self.violations = violations
    }

    /// Reads and validates `url`; errors are `PluginError.invalidData` naming `plugin`, the file and the key path.
    public static func load(from url: URL, plugin: String) throws -> UserData {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw PluginError.invalidData(
                plugin: plugin, file: url.path, keyPath: "",
                problem:
                    "cannot read the file (\(error.localizedDescription)); set the plugin's userData option to an existing file"
            )
        }
        let json: JSONValue
        do {
            json = try JSONValue.parse(data)
        } catch {
            throw PluginError.invalidData(plugin: plugin, file: url.path, keyPath: "", problem: "\(error)")
        }
        return try decode(json, file: url, plugin: plugin)
    }

    /// Validates an already parsed document.
    public static func decode(_ json: JSONValue, file: URL, plugin: String) throws -> UserData {
        func fail(_ path: String, _ problem: String) -> PluginError {
            .invalidData(plugin: plugin, file: file.path, keyPath: path, problem: problem)
        }
        guard case .object(let root) = json else { throw fail("", "expected an object, found \(json.kindName)") }
        let rootKeys = ["note", "user", "documents", "dependents", "workers", "vehicles", "violations"]
        for key in root.keys.sorted() where !rootKeys.contains(key) {
            throw fail(key, "unknown key; valid keys here: \(rootKeys.joined(separator: ", "))")
        }
        var userName: String?
        if let user = root["user"], user != .null {
            guard case .object(let u) = user else { throw fail("user", "expected an object, found \(user.kindName)") }
            for key in u.keys.sorted() where !["name", "nationalId"].contains(key) {
                throw fail("user.\(key)", "unknown key; valid keys here: name, nationalId")
            }
            if let n = u["name"] {
                guard let s = n.stringValue else { throw fail("user.name", "expected a string, found \(n.kindName)") }
                userName = s
            }
        }
        guard let docsValue = root["documents"] else {
            throw fail("documents", "missing required key (use [] for none)")
        }
        guard case .array(let docs) = docsValue else {
            throw fail("documents", "expected an array, found \(docsValue.kindName)")
        }
        var documents: [UserDocument] = []
        var seen: Set<String> = []
        for (i, entry) in docs.enumerated() {
            let path = "documents[\(i)]"
            let o = try StrictObject(entry, path: path, keys: UserDocument.keys, fail: fail)
            let id = try o.string("id", required: true) ?? ""
            guard seen.insert(id).inserted else { throw fail("\(path).id", "'\(id)' is used by an earlier document") }
            let typeName = try o.string("type", required: true) ?? ""
            guard let type = DocumentType(rawValue: typeName) else {
                throw fail(
                    "\(path).type",
                    "'\(typeName)' is not one of: \(DocumentType.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            documents.append(
                UserDocument(
                    id: id, type: type, number: try o.string("number", required: false),
                    expiryDate: try o.date("expiryDate"),
                    renewalFeeSAR: (o.object["renewalFeeSAR"] ?? .null) == .null ? nil : try o.riyals("renewalFeeSAR")))
        }
        let top = try StrictObject(json, path: "", keys: rootKeys, fail: fail)
        let dependents = try top.array("dependents")
        let household = try Self.household(
            dependents: dependents, workers: try top.array("workers"), seen: &seen, fail: fail)
        let vehicles = try Self.vehicles(try top.array("vehicles"), seen: &seen, fail: fail)
        return UserData(
            file: file, userName: userName, documents: documents, dependents: dependents, household: household,
            vehicles: vehicles,
            violations: try Self.violations(try top.array("violations"), vehicles: vehicles, seen: &seen, fail: fail))
    }
}

/// The kinds of documents alerts are derived from.
public enum DocumentType: String, Sendable, CaseIterable, Codable {
    case drivingLicense = "driving_license"
    case passport
    case nationalID = "national_id"
}

/// One of the user's documents.
public struct UserDocument: Sendable, Equatable {
    static let keys = ["id", "type", "number", "expiryDate", "renewalFeeSAR"]

    public var id: String
    public var type: DocumentType
    public var number: String?
    public var expiryDate: CivilDate
    /// The renewal fee in riyals, when known.
    public var renewalFeeSAR: Int?

    public init(id: String, type: DocumentType, number: String? = nil, expiryDate: CivilDate, renewalFeeSAR: Int? = nil)
    {
        self.id = id
        self.type = type
        self.number = number
        self.expiryDate = expiryDate
        self.renewalFeeSAR = renewalFeeSAR
    }

    /// The document as JSON, in the file's shape.
    public var json: JSONValue {
        var o: [String: JSONValue] = [
            "id": .string(id), "type": .string(type.rawValue), "expiryDate": .string(expiryDate.description),
        ]
        if let number { o["number"] = .string(number) }
        if let renewalFeeSAR { o["renewalFeeSAR"] = .number(Double(renewalFeeSAR)) }
        return .object(o)
    }
}
