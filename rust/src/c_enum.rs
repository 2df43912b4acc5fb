//! The macros declaring a C enum's Rust twin and its names, used by every module mirroring one.

/// Declares a C enum's Rust twin: the enum with the C numbers as discriminants, and the
/// private checked conversion from the number C hands over, so no value is transmuted.
macro_rules! c_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$variant_meta:meta])* $variant:ident = $value:literal => $snake:literal, )+
        }
    ) => {
        $(#[$meta])*
        pub enum $name {
            $( $(#[$variant_meta])* $variant = $value, )+
        }

        impl $name {
            /// The variant whose C number is `raw`; `None` for 0 or a number this crate does not know.
            #[allow(dead_code)]
            pub(crate) fn from_raw(raw: u32) -> Option<Self> {
                match raw {
                    $( $value => Some(Self::$variant), )+
                    _ => None,
                }
            }

            /// The C number.
            #[allow(dead_code)]
            pub(crate) fn to_raw(self) -> u32 {
                self as u32
            }

            /// The snake-case name, the C library's own.
            #[allow(dead_code)]
            pub(crate) fn snake_name(self) -> &'static str {
                match self {
                    $( Self::$variant => $snake, )+
                }
            }

            /// Parses the snake-case name or the upper-case C/Python member name, case-insensitive.
            #[allow(dead_code)]
            pub(crate) fn parse_name(text: &str) -> Option<Self> {
                let text = text.trim();
                $( if text.eq_ignore_ascii_case($snake) { return Some(Self::$variant); } )+
                None
            }

            /// Every variant, in number order.
            #[allow(dead_code)]
            pub(crate) const ALL: &'static [Self] = &[ $( Self::$variant, )+ ];
        }
    };
}

/// Implements Display (the snake-case name) and FromStr (snake-case or the upper-case member
/// name, case-insensitive; anything else is [`Status::NotFound`](crate::Status::NotFound), as
/// the C parser answers).
macro_rules! named {
    ($name:ident, $what:literal) => {
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.snake_name())
            }
        }

        impl FromStr for $name {
            type Err = Error;

            fn from_str(text: &str) -> Result<Self> {
                Self::parse_name(text)
                    .ok_or_else(|| Error::new(Status::NotFound, format!("unknown {} name {:?}", $what, text)))
            }
        }
    };
}
