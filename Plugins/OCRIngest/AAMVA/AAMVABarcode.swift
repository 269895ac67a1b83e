import Foundation
import SanadCore

/// The header of an AAMVA PDF417 payload.
public struct AAMVAHeader: Sendable, Hashable {
    /// `@`.
    public let complianceIndicator: Character
    /// The bytes the payload declares: normally LF (0x0A), RS (0x1E) and CR (0x0D).
    public let dataElementSeparator: UInt8
    public let recordSeparator: UInt8
    public let segmentTerminator: UInt8
    /// `ANSI ` (or `AAMVA` on some version 1 cards).
    public let fileType: String
    /// Issuer identification number (6 digits).
    public let iin: String
    /// AAMVA version, 0–99 (1 = DL/ID-2000, 10 = the 2020 standard).
    public let version: Int
    /// Jurisdiction version; absent in versions 0 and 1.
    public let jurisdictionVersion: Int?
    public let numberOfEntries: Int
}

/// One entry of the subfile directory.
public struct AAMVASubfileEntry: Sendable, Hashable {
    /// `DL`, `ID` or a jurisdiction subfile (`Z?`).
    public let type: String
    public let offset: Int
    public let length: Int
}

/// One data element: the three-character id, its value and the byte offset of the id in the payload.
public struct AAMVAElement: Sendable, Hashable {
    public let id: String
    public let value: String
    public let offset: Int
}

/// A subfile and its elements in payload order.
public struct AAMVASubfile: Sendable, Hashable {
    public let type: String
    /// Where the subfile was found (it can differ from the directory; see `AAMVABarcode.warnings`).
    public let offset: Int
    public let elements: [AAMVAElement]

    /// The first element with this id, trailing spaces removed; nil when absent or blank.
    public subscript(id: String) -> String? {
        guard let element = elements.first(where: { $0.id == id }) else { return nil }
        let value = element.value.trimmingCharacters(in: .whitespaces)
        return value.isEmpty ? nil : value
    }

    func element(_ id: String) -> AAMVAElement? { elements.first { $0.id == id } }
}

/// Height as printed: inches or centimetres.
public struct AAMVAHeight: Sendable, Hashable {
    public enum Unit: String, Sendable { case inches = "in", centimetres = "cm" }
    public let value: Int
    public let unit: Unit

    /// The height in centimetres (inches × 2.54, rounded).
    public var centimetres: Int { unit == .centimetres ? value : Int((Double(value) * 2.54).rounded()) }
}

/// Sex as coded in DBC: `1` male, `2` female, `9` not specified (v1 cards write `M`/`F`).
public enum AAMVASex: String, Sendable {
    case male, female, notSpecified
}

/// The decoded text of a driver-licence or ID-card PDF417 barcode (AAMVA DL/ID card design standard, Annex D).
public struct AAMVABarcode: Sendable {
    public let header: AAMVAHeader
    public let directory: [AAMVASubfileEntry]
    public let subfiles: [AAMVASubfile]
    /// Deviations the reader tolerated (moved subfiles, stripped control characters, missing mandatory elements).
    public let warnings: [String]
    /// The issuer's country: from DCG, else the DAJ province code, else the IIN.
    public let country: AAMVAJurisdictions.Country

    /// The `DL` subfile, else the `ID` subfile.
    public var primary: AAMVASubfile? { subfiles.first { $0.type == "DL" } ?? subfiles.first { $0.type == "ID" } }

    /// `DL` or `ID`.
    public var documentKind: String? { primary?.type }

    /// The element of the primary subfile (`DAQ`, `DCS`, …), trimmed; nil when absent.
    public subscript(id: String) -> String? { primary?[id] }

    /// The jurisdiction the IIN belongs to, when it is in AAMVA's list.
    public var issuerJurisdiction: String? { AAMVAJurisdictions.byIIN[header.iin]?.code }

    // MARK: names

    /// Family name: DCS (v2+), DAB or the first part of DAA (v1).
    public var familyName: String? { self["DCS"] ?? self["DAB"] ?? v1Name.first }

    /// First name: DAC (v1, v3+), the first given name of DCT (v2), or the second part of DAA (v1).
    public var firstName: String? {
        self["DAC"] ?? dctNames.first ?? (v1Name.count > 1 ? v1Name[1] : nil)
    }

    /// Middle names: DAD, the rest of DCT, or the rest of DAA.
    public var middleNames: String? {
        if let dad = self["DAD"] { return dad.replacingOccurrences(of: ",", with: " ") }
        if self["DAC"] == nil, dctNames.count > 1 { return dctNames.dropFirst().joined(separator: " ") }
        if v1Name.count > 2 { return v1Name.dropFirst(2).joined(separator: " ") }
        return nil
    }

    /// Suffix: DCU (or DAE in v1).
    public var suffix: String? { self["DCU"] ?? self["DAE"] }

    /// First, middle, family and suffix, space separated.
    public var fullName: String? {
        let parts = [firstName, middleNames, familyName, suffix].compactMap { $0 }
        return parts.isEmpty ? nil : parts.joined(separator: " ")
    }

    /// DDE/DDF/DDG: which name parts the issuer truncated (`T`), by element id.
    public var truncatedNameParts: [String] {
        ["DDE", "DDF", "DDG"].filter { self[$0] == "T" }
    }

    private var v1Name: [String] {
        guard let full = self["DAA"] else { return [] }
        let separators: Set<Character> = full.contains(",") || full.contains("$") ? [",", "$"] : [" "]
        return full.split(whereSeparator: { separators.contains($0) }).map {
            $0.trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty }
    }

    private var dctNames: [String] {
        guard let dct = self["DCT"] else { return [] }
        return dct.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
    }

    // MARK: other fields

    public var licenseNumber: String? { self["DAQ"] }
    public var dateOfBirth: CivilDate? { dates["DBB"] }
    public var expiryDate: CivilDate? { dates["DBA"] }
    public var issueDate: CivilDate? { dates["DBD"] }
    /// Every date element of the primary subfile, read in the issuer's order.
    public let dates: [String: CivilDate]

    public var sex: AAMVASex? {
        switch self["DBC"] {
        case "1", "M": return .male
        case "2", "F": return .female
        case "9": return .notSpecified
        default: return nil
        }
    }

    /// DAU (`070 in`, `178 cm`), or v1's DAV in centimetres.
    public var height: AAMVAHeight? {
        if let dau = self["DAU"] {
            let digits = dau.prefix { $0.isNumber }
            let unit = dau.dropFirst(digits.count).trimmingCharacters(in: .whitespaces).lowercased()
            if let value = Int(digits) {
                if unit == "in" { return AAMVAHeight(value: value, unit: .inches) }
                if unit == "cm" { return AAMVAHeight(value: value, unit: .centimetres) }
            }
        }
        if let dav = self["DAV"], let value = Int(dav.prefix { $0.isNumber }) {
            return AAMVAHeight(value: value, unit: .centimetres)
        }
        return nil
    }

    /// DAK without trailing spaces and, for US ZIP+4 written as nine digits, a dash (`23269-0000`).
    public var postalCode: String? {
        guard let dak = self["DAK"] else { return nil }
        if country == .usa, dak.count == 9, dak.allSatisfy(\.isNumber) {
            return dak.hasSuffix("0000") ? String(dak.prefix(5)) : "\(dak.prefix(5))-\(dak.suffix(4))"
        }
        return dak
    }

    init(
        header: AAMVAHeader, directory: [AAMVASubfileEntry], subfiles: [AAMVASubfile], warnings: [String],
        country: AAMVAJurisdictions.Country, dates: [String: CivilDate]
    ) {
        self.header = header
        self.directory = directory
        self.subfiles = subfiles
        self.warnings = warnings
        self.country = country
        self.dates = dates
    }
}
