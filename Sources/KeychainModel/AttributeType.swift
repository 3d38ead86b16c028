/// The type of an item attribute's value in the catalogue.
public enum AttributeType: Sendable, Hashable {
    case string
    case data
    case number
    case date
    case bool
}
