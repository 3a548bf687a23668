//! Types as the parser spells them: a column definition's type, and the target of a CAST.

use sqlparser::ast;

use crate::error::{self, Result};
use crate::expr::Func;
use crate::types::{SqlType, TypeKind};

/// Maps a parsed column type to Strata's.
pub fn sql_type(data_type: &ast::DataType) -> Result<SqlType> {
    use ast::DataType as D;
    let int = |kind, unsigned| SqlType {
        unsigned,
        ..SqlType::new(kind)
    };
    let binary = |ty: SqlType| SqlType { binary: true, ..ty };
    let chars = |kind, len: &Option<ast::CharacterLength>, default: u32| {
        let length = match len {
            Some(ast::CharacterLength::IntegerLength { length, .. }) => *length as u32,
            Some(ast::CharacterLength::Max) => 65_535,
            None => default,
        };
        SqlType {
            length,
            ..SqlType::new(kind)
        }
    };
    let decimal = |info: &ast::ExactNumberInfo, unsigned| {
        let (length, scale) = match info {
            ast::ExactNumberInfo::None => (10, 0),
            ast::ExactNumberInfo::Precision(p) => (*p as u32, 0),
            ast::ExactNumberInfo::PrecisionAndScale(p, s) => (*p as u32, *s as u32),
        };
        SqlType {
            unsigned,
            length: length.min(65),
            scale: scale.min(30),
            ..SqlType::new(TypeKind::Decimal)
        }
    };
    let text = |bytes: usize| SqlType {
        length: bytes as u32,
        ..SqlType::new(TypeKind::Text)
    };
    Ok(match data_type {
        D::TinyInt(_) | D::Bool | D::Boolean => int(TypeKind::TinyInt, false),
        D::TinyIntUnsigned(_) | D::UTinyInt => int(TypeKind::TinyInt, true),
        D::SmallInt(_) | D::Int2(_) => int(TypeKind::SmallInt, false),
        D::SmallIntUnsigned(_) | D::Int2Unsigned(_) | D::USmallInt => int(TypeKind::SmallInt, true),
        D::MediumInt(_) => int(TypeKind::MediumInt, false),
        D::MediumIntUnsigned(_) => int(TypeKind::MediumInt, true),
        D::Int(_) | D::Integer(_) | D::Int4(_) => int(TypeKind::Int, false),
        D::IntUnsigned(_) | D::IntegerUnsigned(_) | D::Int4Unsigned(_) => int(TypeKind::Int, true),
        D::BigInt(_) | D::Int8(_) | D::Int64 => int(TypeKind::BigInt, false),
        D::BigIntUnsigned(_) | D::Int8Unsigned(_) | D::UBigInt => int(TypeKind::BigInt, true),
        D::Float(_) | D::Real | D::Float4 => SqlType::new(TypeKind::Float),
        D::Double(_) | D::DoublePrecision | D::Float8 | D::Float64 => {
            SqlType::new(TypeKind::Double)
        }
        D::Decimal(info) | D::Numeric(info) | D::Dec(info) => decimal(info, false),
        D::DecimalUnsigned(info) | D::DecUnsigned(info) => decimal(info, true),
        D::Char(len) | D::Character(len) => chars(TypeKind::Char, len, 1),
        D::Varchar(len) | D::CharacterVarying(len) | D::CharVarying(len) | D::Nvarchar(len) => {
            chars(TypeKind::Varchar, len, 255)
        }
        // The plain size keeps length 0, as columns stored before sizes were kept.
        D::Text => SqlType::new(TypeKind::Text),
        D::TinyText => text(crate::types::TINY_TEXT_BYTES),
        D::MediumText => text(crate::types::MEDIUM_TEXT_BYTES),
        D::LongText => text(crate::types::LONG_TEXT_BYTES),
        D::Blob(_) => binary(SqlType::new(TypeKind::Text)),
        D::TinyBlob => binary(text(crate::types::TINY_TEXT_BYTES)),
        D::MediumBlob => binary(text(crate::types::MEDIUM_TEXT_BYTES)),
        D::LongBlob => binary(text(crate::types::LONG_TEXT_BYTES)),
        D::Binary(len) => binary(SqlType {
            length: len.unwrap_or(1) as u32,
            ..SqlType::new(TypeKind::Char)
        }),
        D::Varbinary(len) => binary(SqlType {
            length: match len {
                Some(ast::BinaryLength::IntegerLength { length }) => {
                    u32::try_from(*length).unwrap_or(u32::MAX)
                }
                _ => 65_535,
            },
            ..SqlType::new(TypeKind::Varchar)
        }),
        D::Date => SqlType::new(TypeKind::Date),
        D::Bit(bits) => match bits.unwrap_or(1) {
            bits @ 1..=64 => SqlType {
                length: bits as u32,
                unsigned: true,
                ..SqlType::new(TypeKind::Bit)
            },
            _ => {
                return Err(crate::error::Error::new(
                    1439,
                    "42000",
                    "Display width out of range for column (max = 64)",
                ))
            }
        },
        D::JSON => SqlType::new(TypeKind::Json),
        D::Enum(members, _) => SqlType {
            members: members
                .iter()
                .map(|m| match m {
                    ast::EnumMember::Name(name) | ast::EnumMember::NamedValue(name, _) => {
                        name.trim_end().to_string()
                    }
                })
                .collect(),
            ..SqlType::new(TypeKind::Enum)
        },
        D::Set(members) => SqlType {
            members: members.iter().map(|m| m.trim_end().to_string()).collect(),
            ..SqlType::new(TypeKind::Set)
        },
        D::Custom(name, modifiers)
            if modifiers.is_empty() && name.to_string().eq_ignore_ascii_case("year") =>
        {
            SqlType::new(TypeKind::Year)
        }
        D::Datetime(fsp) => SqlType {
            scale: fsp.unwrap_or(0).min(6) as u32,
            ..SqlType::new(TypeKind::DateTime)
        },
        D::Timestamp(fsp, _) => SqlType {
            scale: fsp.unwrap_or(0).min(6) as u32,
            ..SqlType::new(TypeKind::Timestamp)
        },
        D::Time(fsp, _) => SqlType {
            scale: fsp.unwrap_or(0).min(6) as u32,
            ..SqlType::new(TypeKind::Time)
        },
        other => return Err(error::unsupported(format!("column type {other}"))),
    })
}

pub fn cast_func(data_type: &ast::DataType) -> Result<Func> {
    use ast::DataType as D;
    Ok(match data_type {
        D::Signed | D::SignedInteger | D::Int(_) | D::Integer(_) | D::BigInt(_) => Func::CastSigned,
        D::Unsigned | D::UnsignedInteger | D::IntUnsigned(_) | D::BigIntUnsigned(_) => {
            Func::CastUnsigned
        }
        D::Char(_) | D::Varchar(_) | D::Text | D::String(_) => Func::CastChar,
        D::Binary(_) | D::Varbinary(_) | D::Blob(_) => Func::CastBinary,
        D::Double(_) | D::DoublePrecision | D::Float(_) | D::Real => Func::CastDouble,
        D::Date => Func::CastDate,
        D::Datetime(_) | D::Timestamp(..) => Func::CastDateTime,
        D::Time(fsp, _) => Func::CastTime(fsp.unwrap_or(0).min(6) as u8),
        D::Decimal(_) | D::Numeric(_) | D::Dec(_) => {
            let t = sql_type(data_type)?;
            Func::CastDecimal(t.length, t.scale)
        }
        D::JSON => Func::Json(crate::expr::JsonFunc::Cast),
        other => return Err(error::unsupported(format!("CAST AS {other}"))),
    })
}
