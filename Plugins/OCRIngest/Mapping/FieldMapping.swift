/// Where a proposed value came from, so the person can check it and the forms engine can cite it.
public struct FieldEvidence: Sendable, Hashable {
    public let documentID: String
    /// `MRZ TD3`, `AAMVA DL v10`, …
    public let documentKind: String
    /// The source field: an MRZ field with its line and columns, or an AAMVA element id with its byte offset.
    public let sourceField: String
    /// The OCR repairs made to the characters this value came from (empty when read as printed).
    public let repairs: [String]
    /// Remarks the person should see (truncated names, characters no check digit confirms).
    public let notes: [String]
}

/// One proposed form value with its evidence. The person confirms or rejects it in the conversation.
public struct FieldProposal: Sendable, Hashable {
    public let fieldID: String
    public let value: String
    public let evidence: FieldEvidence
}

/// The MRZ values a form field can take.
public enum MRZSourceField: String, Sendable, CaseIterable {
    case surname, givenNames, sex, dateOfBirth, nationality, documentNumber, issuingState, dateOfExpiry,
        documentType

    /// The zone fields (and their check digits) the value is read from.
    var zoneFields: [MRZFieldID] {
        switch self {
        case .surname, .givenNames: return [.name]
        case .sex: return [.sex]
        case .dateOfBirth: return [.dateOfBirth, .dateOfBirthCheck]
        case .nationality: return [.nationality]
        case .documentNumber: return [.documentNumber, .documentNumberCheck, .optionalData1]
        case .issuingState: return [.issuingState]
        case .dateOfExpiry: return [.dateOfExpiry, .dateOfExpiryCheck]
        case .documentType: return [.documentType]
        }
    }
}

/// The AAMVA values a form field can take: an element, or a value derived from several.
public enum AAMVASourceField: Sendable, Hashable {
    case element(String)
    case fullName, firstName, middleNames, familyName, dateOfBirth, expiryDate, issueDate, sex, heightInches,
        postalCode, issuingJurisdiction

    var label: String {
        switch self {
        case .element(let id): return "\(id) (\(AAMVAElementIDs.names[id] ?? "element"))"
        case .fullName: return "DAC/DAD/DCS/DCU (or DCT, DAA)"
        case .firstName: return "DAC (or DCT, DAA)"
        case .middleNames: return "DAD (or DCT, DAA)"
        case .familyName: return "DCS (or DAB, DAA)"
        case .dateOfBirth: return "DBB (Date of birth)"
        case .expiryDate: return "DBA (Document expiration date)"
        case .issueDate: return "DBD (Document issue date)"
        case .sex: return "DBC (Sex)"
        case .heightInches: return "DAU (Height)"
        case .postalCode: return "DAK (Address postal code)"
        case .issuingJurisdiction: return "IIN (issuer), else DAJ"
        }
    }

    /// The elements the value is read from, for the byte offsets in the evidence.
    var elements: [String] {
        switch self {
        case .element(let id): return [id]
        case .fullName: return ["DAC", "DAD", "DCS", "DCU", "DCT", "DAA"]
        case .firstName: return ["DAC", "DCT", "DAA"]
        case .middleNames: return ["DAD", "DCT", "DAA"]
        case .familyName: return ["DCS", "DAB", "DAA"]
        case .dateOfBirth: return ["DBB"]
        case .expiryDate: return ["DBA"]
        case .issueDate: return ["DBD"]
        case .sex: return ["DBC"]
        case .heightInches: return ["DAU", "DAV"]
        case .postalCode: return ["DAK"]
        case .issuingJurisdiction: return ["DAJ"]
        }
    }
}

/// Field mappings as data: which document value fills which form field.
public enum FieldMappings {
    /// Machine-readable zone → the DS-160 identity and passport fields.
    public static let mrzToDS160: [(fieldID: String, source: MRZSourceField)] = [
        ("surname", .surname), ("givenNames", .givenNames), ("sex", .sex), ("dateOfBirth", .dateOfBirth),
        ("nationality", .nationality), ("passportNumber", .documentNumber),
        ("passportIssuingCountry", .issuingState), ("passportExpiry", .dateOfExpiry),
    ]

    /// AAMVA barcode → the DMV licence-renewal identity and address fields.
    public static let aamvaToDMVRenewal: [(fieldID: String, source: AAMVASourceField)] = [
        ("fullName", .fullName), ("firstName", .firstName), ("middleName", .middleNames),
        ("lastName", .familyName), ("nameSuffix", .element("DCU")), ("dob", .dateOfBirth), ("sex", .sex),
        ("licenseNumber", .element("DAQ")), ("state", .issuingJurisdiction), ("licenseClass", .element("DCA")),
        ("licenseExpiry", .expiryDate), ("licenseIssueDate", .issueDate),
        ("documentDiscriminator", .element("DCF")), ("addressStreet", .element("DAG")),
        ("addressLine2", .element("DAH")), ("addressCity", .element("DAI")),
        ("addressState", .element("DAJ")), ("addressPostalCode", .postalCode), ("eyeColor", .element("DAY")),
        ("heightInches", .heightInches),
    ]
}

/// Turns read documents into form proposals.
public enum FieldProposer {
    /// Proposals from a machine-readable zone. Throws `notVerified` unless every check held and no field is
    /// malformed: an unverified zone proposes nothing.
    public static func proposals(
        from mrz: MRZResult, documentID: String,
        mapping: [(fieldID: String, source: MRZSourceField)] = FieldMappings.mrzToDS160
    ) throws -> [FieldProposal] {
        guard mrz.isValid else {
            let checks = mrz.failedChecks.map(\.rawValue).joined(separator: ", ")
            let why = [checks.isEmpty ? nil : "failed checks: \(checks)", mrz.problems.first].compactMap { $0 }
            throw OCRIngestError.notVerified(
                "\(mrz.format.rawValue) zone of \(documentID): \(why.joined(separator: "; "))")
        }
        let layout = MRZLayout.of(mrz.format)
        return mapping.compactMap { entry in
            guard let value = value(of: entry.source, in: mrz), !value.isEmpty else { return nil }
            let zoneFields = entry.source.zoneFields
            let places = zoneFields.compactMap { id -> String? in
                guard let f = layout.field(id) else { return nil }
                return
                    "\(id.rawValue) (line \(f.line + 1), columns \(f.columns.lowerBound + 1)–\(f.columns.upperBound))"
            }
            var notes: [String] = []
            if entry.source == .surname || entry.source == .givenNames, mrz.nameIsPossiblyTruncated {
                notes.append("the name fills the whole MRZ name field and may be truncated; compare with the data page")
            }
            if entry.source == .nationality || entry.source == .issuingState {
                let printed = entry.source == .nationality ? mrz.nationality : mrz.issuingState
                if let special = MRZCountryCodes.special[printed] { notes.append("\(printed): \(special)") }
            }
            let blind = mrz.checkBlindCharacters.filter { zoneFields.contains($0.field) }
            if !blind.isEmpty {
                let columns = blind.map { "line \($0.line + 1) column \($0.column + 1)" }.joined(separator: ", ")
                notes.append("G/6 at \(columns): no check digit tells them apart; compare with the data page")
            }
            let repairs = mrz.repairs.filter { zoneFields.contains($0.field) }.map(\.description)
            return FieldProposal(
                fieldID: entry.fieldID, value: value,
                evidence: FieldEvidence(
                    documentID: documentID, documentKind: "MRZ \(mrz.format.rawValue)",
                    sourceField: places.joined(separator: ", "), repairs: repairs, notes: notes))
        }
    }

    private static func value(of source: MRZSourceField, in mrz: MRZResult) -> String? {
        switch source {
        case .surname: return mrz.surname
        case .givenNames: return mrz.givenNamesText
        case .sex:
            switch mrz.sex {
            case .male: return "male"
            case .female: return "female"
            case .other: return "x"
            case .unspecified, nil: return nil
            }
        case .dateOfBirth: return mrz.dateOfBirth.date?.description
        case .dateOfExpiry: return mrz.dateOfExpiry.date?.description
        case .nationality: return MRZCountryCodes.isoCode(for: mrz.nationality)
        case .issuingState: return MRZCountryCodes.isoCode(for: mrz.issuingState)
        case .documentNumber: return mrz.documentNumber
        case .documentType: return mrz.documentType
        }
    }

    /// Proposals from an AAMVA barcode. Barcode text carries its own error correction, so values are proposed as
    /// read; the evidence names the element and its byte offset.
    public static func proposals(
        from barcode: AAMVABarcode, documentID: String,
        mapping: [(fieldID: String, source: AAMVASourceField)] = FieldMappings.aamvaToDMVRenewal
    ) -> [FieldProposal] {
        let kind = "AAMVA \(barcode.documentKind ?? "?") v\(barcode.header.version)"
        return mapping.compactMap { entry in
            guard let value = value(of: entry.source, in: barcode), !value.isEmpty else { return nil }
            let offsets = entry.source.elements.compactMap { id in
                barcode.primary?.element(id).map { "\(id) at byte \($0.offset)" }
            }
            var notes: [String] = []
            let truncated = barcode.truncatedNameParts
            if [.fullName, .firstName, .middleNames, .familyName].contains(entry.source), !truncated.isEmpty {
                notes.append("the issuer truncated the name (\(truncated.joined(separator: ", ")) = T)")
            }
            return FieldProposal(
                fieldID: entry.fieldID, value: value,
                evidence: FieldEvidence(
                    documentID: documentID, documentKind: kind,
                    sourceField: entry.source.label + (offsets.isEmpty ? "" : ": " + offsets.joined(separator: ", ")),
                    repairs: [], notes: notes))
        }
    }

    private static func value(of source: AAMVASourceField, in b: AAMVABarcode) -> String? {
        switch source {
        case .element(let id): return b[id]
        case .fullName: return b.fullName
        case .firstName: return b.firstName
        case .middleNames: return b.middleNames
        case .familyName: return b.familyName
        case .dateOfBirth: return b.dateOfBirth?.description
        case .expiryDate: return b.expiryDate?.description
        case .issueDate: return b.issueDate?.description
        case .sex:
            switch b.sex {
            case .male: return "male"
            case .female: return "female"
            case .notSpecified, nil: return nil
            }
        case .heightInches:
            guard let h = b.height else { return nil }
            return String(h.unit == .inches ? h.value : Int((Double(h.value) / 2.54).rounded()))
        case .postalCode: return b.postalCode
        case .issuingJurisdiction: return b.issuerJurisdiction ?? b["DAJ"]
        }
    }
}

/// The plugin's identity, for the host configuration.
public enum OCRIngest {
    /// The plugin id in host configs.
    public static let pluginID = "ocr-ingest"
}
