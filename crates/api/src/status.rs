//! Upstream statuses as enums, declared with [`wire_status!`]: each reads
//! its known wire strings into their arm and any other string into
//! `Unknown`, so a status the provider adds never fails a read; it writes
//! and displays the same string back (pages show the wire word, and CSS
//! classes such as `state-pending` are built from it).

/// Declares a status enum from its arms and their wire strings, with
/// `from_wire`, `as_str`, `Display`, `From<&str>`, serde and (with the
/// `openapi` feature) a string schema listing the known values.
macro_rules! wire_status {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $($(#[$arm_meta:meta])* $arm:ident = $wire:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$arm_meta])* $arm,)+
            /// A status this client does not know, as the service sent it.
            Unknown(String),
        }

        impl $name {
            /// The known statuses, in the spec's order.
            pub const KNOWN: &'static [$name] = &[$($name::$arm),+];

            /// The status a wire string names; an unknown one kept as sent.
            pub fn from_wire(s: &str) -> Self {
                match s {
                    $($wire => $name::$arm,)+
                    other => $name::Unknown(other.to_owned()),
                }
            }

            /// The wire string.
            pub fn as_str(&self) -> &str {
                match self {
                    $($name::$arm => $wire,)+
                    $name::Unknown(s) => s,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                Self::from_wire(s)
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let s = <String as serde::Deserialize>::deserialize(deserializer)?;
                Ok(Self::from_wire(&s))
            }
        }

        #[cfg(feature = "openapi")]
        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::schema::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .enum_values(Some([$($wire),+]))
                    .into()
            }
        }

        #[cfg(feature = "openapi")]
        impl utoipa::ToSchema for $name {}
    };
}

pub(crate) use wire_status;

#[cfg(test)]
mod tests {
    wire_status! {
        /// A status for the tests.
        pub enum Sample {
            Pending = "pending",
            PartlyDone = "partially_done",
        }
    }

    #[test]
    fn known_strings_read_into_their_arm_and_write_back_the_same() {
        let read: Vec<Sample> = serde_json::from_str(r#"["pending", "partially_done"]"#).unwrap();
        assert_eq!(read, Sample::KNOWN);
        assert_eq!(
            serde_json::to_string(&read).unwrap(),
            r#"["pending","partially_done"]"#
        );
    }

    #[test]
    fn an_unknown_string_is_kept_and_shown_as_sent() {
        let read: Sample = serde_json::from_str(r#""on_hold""#).unwrap();
        assert_eq!(read, Sample::Unknown("on_hold".to_owned()));
        assert_eq!(read.to_string(), "on_hold");
        assert_eq!(serde_json::to_string(&read).unwrap(), r#""on_hold""#);
    }

    #[test]
    fn the_page_word_is_the_wire_string() {
        assert_eq!(Sample::PartlyDone.to_string(), "partially_done");
        assert_eq!(Sample::from("pending"), Sample::Pending);
    }
}
