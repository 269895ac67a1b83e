import AbsherData
import SanadChat
import SanadCore

/// The renewal services a proactive alert leads to; the raw value is the deep link's `serviceType`.
public enum AlertServiceType: String, Sendable, CaseIterable, Codable {
    case drivingLicenseRenewal = "driving_license_renewal"
    case passportRenewal = "passport_renewal"
    case nationalIDRenewal = "national_id_renewal"

    /// The alert's title (`رخصة قيادتك على وشك الانتهاء`).
    public var title: String {
        switch self {
        case .drivingLicenseRenewal: return "رخصة قيادتك على وشك الانتهاء"
        case .passportRenewal: return "جواز سفرك على وشك الانتهاء"
        case .nationalIDRenewal: return "هويتك الوطنية على وشك الانتهاء"
        }
    }

    /// The service's name (`تجديد رخصة القيادة`).
    public var serviceName: String {
        switch self {
        case .drivingLicenseRenewal: return "تجديد رخصة القيادة"
        case .passportRenewal: return "تجديد جواز السفر"
        case .nationalIDRenewal: return "تجديد الهوية الوطنية"
        }
    }

    /// The document's name (`رخصة القيادة`).
    public var documentName: String {
        switch self {
        case .drivingLicenseRenewal: return "رخصة القيادة"
        case .passportRenewal: return "جواز السفر"
        case .nationalIDRenewal: return "الهوية الوطنية"
        }
    }

    /// Whether the document's name is grammatically feminine (رخصة، هوية) or not (جواز), for verb agreement.
    public var isFeminine: Bool { self != .passportRenewal }

    /// Wordings that name the document, for the grounding check (the title, the document's name, the possessive).
    public var documentWordings: [String] {
        switch self {
        case .drivingLicenseRenewal: return [title, documentName, "رخصة قيادتك", "رخصة قيادة"]
        case .passportRenewal: return [title, documentName, "جواز سفرك", "جواز سفر", "الجواز"]
        case .nationalIDRenewal: return [title, documentName, "هويتك الوطنية", "هويتك", "الهوية"]
        }
    }
}

/// An alert for a document that expires within the window.
public struct ProactiveAlert: Sendable, Equatable {
    /// The alert id (the document's id).
    public var id: String
    public var serviceType: AlertServiceType
    public var document: UserDocument
    /// Days from today to the expiry date (0 = expires today).
    public var daysRemaining: Int

    public init(id: String, serviceType: AlertServiceType, document: UserDocument, daysRemaining: Int) {
        self.id = id
        self.serviceType = serviceType
        self.document = document
        self.daysRemaining = daysRemaining
    }

    public var title: String { serviceType.title }

    /// `{serviceType, title, alertId}` of this alert.
    public var deepLink: DeepLink {
        DeepLink(serviceType: serviceType.rawValue, title: title, alertId: id)
    }

    /// The alert as JSON for tools.
    public var json: JSONValue {
        var o: [String: JSONValue] = [
            "alertId": .string(id), "serviceType": .string(serviceType.rawValue), "title": .string(title),
            "service": .string(serviceType.serviceName), "daysRemaining": .number(Double(daysRemaining)),
            "expiryDate": .string(document.expiryDate.description),
            "url": .string(deepLink.url(AbsherSettings.linkFormat)),
            "chip": .string(ProactiveAlertsPlugin.chipPrefix + title),
        ]
        if let n = document.number { o["documentNumber"] = .string(n) }
        if let f = document.renewalFeeSAR { o["renewalFeeSAR"] = .number(Double(f)) }
        return .object(o)
    }
}

/// The active alerts: documents expiring in `0...windowDays` days from `today`, the soonest first (documents
/// expiring the same day keep their order in the file). Expired documents are not alerts.
public func deriveAlerts(from documents: [UserDocument], today: CivilDate, windowDays: Int) -> [ProactiveAlert] {
    let alerts = documents.enumerated().compactMap { offset, doc -> (Int, ProactiveAlert)? in
        let days = today.days(until: doc.expiryDate)
        guard days >= 0, days <= windowDays else { return nil }
        return (
            offset, ProactiveAlert(id: doc.id, serviceType: doc.type.renewalService, document: doc, daysRemaining: days)
        )
    }
    return alerts.sorted { a, b in
        a.1.daysRemaining != b.1.daysRemaining ? a.1.daysRemaining < b.1.daysRemaining : a.0 < b.0
    }.map(\.1)
}

extension DocumentType {
    /// The renewal service an expiring document of this kind leads to.
    public var renewalService: AlertServiceType {
        switch self {
        case .drivingLicense: return .drivingLicenseRenewal
        case .passport: return .passportRenewal
        case .nationalID: return .nationalIDRenewal
        }
    }
}
