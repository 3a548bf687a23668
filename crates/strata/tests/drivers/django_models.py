"""Django's MySQL backend (over PyMySQL) against Strata: a model round trip.

Usage: django_models.py PORT MODULE_DIR. Configures Django in code, creates two models' tables
with the schema editor (a foreign key, a unique field, an index), and runs the ORM: create,
filter, select_related, annotate/aggregate, update, transaction.atomic with a rollback, an
IntegrityError, delete; then alters a field and drops the tables. CLIENT_FOUND_ROWS, which
Django asks for, makes an UPDATE count the rows it matched. Prints "ok" at the end; any
failed check raises.
"""

import datetime
import decimal
import sys

port = int(sys.argv[1])
sys.path.insert(0, sys.argv[2])

import pymysql  # noqa: E402
from pymysql.constants import CLIENT  # noqa: E402

pymysql.install_as_MySQLdb()

import django  # noqa: E402
from django.conf import settings  # noqa: E402

DB = "django_test"
raw = pymysql.connect(host="127.0.0.1", port=port, user="root", password="", autocommit=True)
raw.cursor().execute(f"DROP DATABASE IF EXISTS {DB}")
raw.cursor().execute(f"CREATE DATABASE {DB}")

settings.configure(
    DATABASES={
        "default": {
            "ENGINE": "django.db.backends.mysql",
            "NAME": DB,
            "USER": "root",
            "PASSWORD": "",
            "HOST": "127.0.0.1",
            "PORT": str(port),
            # What mysqlclient, Django's usual driver, asks for by default: Django sends its
            # session settings as two statements in one query (MariaDB refuses them without).
            "OPTIONS": {"client_flag": CLIENT.FOUND_ROWS | CLIENT.MULTI_STATEMENTS},
        }
    },
    INSTALLED_APPS=[],
    USE_TZ=False,
    DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
)
django.setup()

from django.db import IntegrityError, connection, models, transaction  # noqa: E402
from django.db.models import Count, Sum  # noqa: E402


def expect(got, want, what):
    if got != want:
        raise AssertionError(f"{what}: got {got!r}, want {want!r}")


class Shelf(models.Model):
    name = models.CharField(max_length=40, unique=True)

    class Meta:
        app_label = "roundtrip"


class Item(models.Model):
    shelf = models.ForeignKey(Shelf, on_delete=models.CASCADE, related_name="items")
    title = models.CharField(max_length=100, db_index=True)
    price = models.DecimalField(max_digits=8, decimal_places=2)
    added = models.DateTimeField()
    in_stock = models.BooleanField(default=True)
    notes = models.TextField(blank=True, default="")
    data = models.JSONField(default=dict)
    raw = models.BinaryField(null=True)

    class Meta:
        app_label = "roundtrip"


with connection.schema_editor() as editor:
    editor.create_model(Shelf)
    editor.create_model(Item)

expect(connection.mysql_is_mariadb, False, "server flavour")
top = Shelf.objects.create(name="top")
low = Shelf.objects.create(name="low")
when = datetime.datetime(2024, 2, 29, 13, 14, 15)
Item.objects.create(shelf=top, title="kettle", price=decimal.Decimal("19.99"), added=when,
                    data={"watts": 2000}, raw=b"\x00\xff")
Item.objects.create(shelf=top, title="mug", price=decimal.Decimal("4.50"), added=when,
                    in_stock=False)
Item.objects.create(shelf=low, title="pan", price=decimal.Decimal("25.00"), added=when)

kettle = Item.objects.select_related("shelf").get(title="kettle")
expect((kettle.shelf.name, kettle.price, kettle.added, kettle.data, bytes(kettle.raw)),
       ("top", decimal.Decimal("19.99"), when, {"watts": 2000}, b"\x00\xff"), "round trip")
expect(list(Item.objects.filter(in_stock=True, price__lt=30).order_by("title")
            .values_list("title", flat=True)), ["kettle", "pan"], "filter")
expect(list(Item.objects.filter(title__startswith="m").values_list("title", flat=True)),
       ["mug"], "startswith")
shelves = (Item.objects.values("shelf__name").annotate(n=Count("id"), total=Sum("price"))
           .order_by("shelf__name"))
expect([(s["shelf__name"], s["n"], s["total"]) for s in shelves],
       [("low", 1, decimal.Decimal("25.00")), ("top", 2, decimal.Decimal("24.49"))], "annotate")
expect(Item.objects.filter(shelf__name="top").update(in_stock=False), 2, "update")

try:
    with transaction.atomic():
        Item.objects.filter(title="pan").update(price=decimal.Decimal("1.00"))
        Shelf.objects.create(name="top")
    raise AssertionError("a duplicate shelf was created")
except IntegrityError as e:
    expect(e.args[0], 1062, "duplicate")
expect(Item.objects.get(title="pan").price, decimal.Decimal("25.00"), "atomic rolled back")

with connection.schema_editor() as editor:
    old = Item._meta.get_field("title")
    new = models.CharField(max_length=200, db_index=True)
    new.set_attributes_from_name("title")
    new.model = Item
    editor.alter_field(Item, old, new)
Item.objects.create(shelf=low, title="x" * 200, price=1, added=when)
expect(Item.objects.filter(title__regex="^x+$").count(), 1, "altered field")

# (The models belong to no installed app, so Django's collector does not follow the foreign
# key: the items go first, as a cascade would take them.)
deleted, _ = Item.objects.filter(shelf=top).delete()
top.delete()
expect((deleted, Item.objects.count(), Shelf.objects.count()), (2, 2, 1), "delete")
with connection.schema_editor() as editor:
    editor.delete_model(Item)
    editor.delete_model(Shelf)
connection.close()
raw.cursor().execute(f"DROP DATABASE {DB}")
print("ok")
