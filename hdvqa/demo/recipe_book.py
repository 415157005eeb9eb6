"""The demo kitchen's recipes: names, steps, ingredients (amount, unit, kcal, carbs, fat,
protein; None for the release's "N/A"), hand-written distractor banks, noun categories."""

RECIPES = [
    {
        "name": "Tomato Pasta",
        "steps": [
            "Boil water in a large pot and add salt.",
            "Chop the onion and the garlic.",
            "Fry the onion in olive oil until soft",
            "Add the chopped tomatoes and simmer for 10 minutes",
            "Cook the pasta in the boiling water",
            "Drain the pasta and mix it with the sauce.",
        ],
        "ingredients": [
            ("pasta", 200, "g", 712, 144.0, 3.0, 25.0),
            ("onion", 110, "g", 44, 10.3, 0.1, 1.2),
            ("garlic", 2, "cloves", 9, 2.0, 0.0, 0.4),
            ("olive oil", 1, "tbsp", 119, 0.0, 13.5, 0.0),
            ("chopped tomatoes", 400, "g", 84, 14.0, 0.8, 4.4),
            ("salt", None, None, None, None, None, None),
        ],
        "similar": ["Penne Arrabbiata", "Spaghetti Bolognese", "Pasta alla Norma", "Pasta Puttanesca"],
        "unused": ["basil", "parmesan", "chilli flakes", "anchovies", "capers"],
    },
    {
        "name": "Vegetable Curry",
        "steps": [
            "Peel and dice the potatoes",
            "Slice the onion.",
            "Fry the curry paste in oil for one minute",
            "Add the onion and the potatoes and stir",
            "Pour in the coconut milk and simmer for 20 minutes",
            "Stir in the spinach until wilted",
            "Serve with rice",
        ],
        "ingredients": [
            ("potatoes", 450, "g", 347, 78.8, 0.4, 9.0),
            ("onion", 150, "g", 60, 14.0, 0.2, 1.6),
            ("curry paste", 2, "tbsp", 60, 6.0, 3.4, 1.0),
            ("vegetable oil", 15, "ml", 124, 0.0, 14.0, 0.0),
            ("coconut milk", 400, "ml", 680, 12.0, 72.0, 6.4),
            ("spinach", 100, "g", 23, 3.6, 0.4, 2.9),
            ("rice", 180, "g", 650, 143.0, 1.2, 12.0),
        ],
        "similar": ["Chickpea Curry", "Thai Green Curry", "Aloo Gobi", "Dal Tadka"],
        "unused": ["chickpeas", "tofu", "cauliflower", "lime", "coriander"],
    },
    {
        "name": "Pancakes",
        "steps": [
            "Weigh the flour into a bowl",
            "Whisk the eggs and the milk into the flour",
            "Heat the butter in a frying pan",
            "Pour a ladle of batter into the pan and cook for 1 minute each side",
            "Serve with lemon and sugar.",
        ],
        "ingredients": [
            ("plain flour", 100, "g", 364, 76.0, 1.0, 10.0),
            ("eggs", 2, "quantity", 143, 0.7, 9.5, 12.6),
            ("milk", 300, "ml", 138, 14.4, 5.4, 9.9),
            ("butter", 10, "g", 72, 0.0, 8.1, 0.1),
            ("lemon juice", 15, "ml", 3, 1.0, 0.0, 0.1),
            ("sugar", 8, "g", 31, 8.0, 0.0, 0.0),
            # Weighed, but amount and nutrition N/A: the amount/nutrition prototypes skip it.
            ("vanilla sugar", None, "g", None, None, None, None),
        ],
        "similar": ["Crepes", "Waffles", "Dutch Baby", "Drop Scones"],
        "unused": ["baking powder", "blueberries", "maple syrup", "vanilla extract"],
    },
    {
        "name": "Chicken Stir Fry",
        "steps": [
            "Slice the chicken breast into strips",
            "Cut the peppers and the broccoli",
            "Fry the chicken in sesame oil until golden",
            "Add the vegetables and stir fry for 4 minutes",
            "Add the soy sauce and the honey",
            "Serve over the noodles",
        ],
        "ingredients": [
            ("chicken breast", 300, "g", 495, 0.0, 10.8, 93.0),
            ("red pepper", 160, "g", 50, 9.6, 0.5, 1.6),
            ("broccoli", 150, "g", 51, 10.5, 0.6, 4.2),
            ("sesame oil", 1, "tbsp", 120, 0.0, 13.6, 0.0),
            ("soy sauce", 2, "tbsp", 18, 1.6, 0.0, 2.6),
            ("honey", 1, "tbsp", 64, 17.3, 0.0, 0.1),
            ("egg noodles", 150, "g", 207, 38.0, 2.3, 7.0),
        ],
        "similar": ["Beef and Broccoli", "Chicken Chow Mein", "Kung Pao Chicken", "Teriyaki Chicken"],
        "unused": ["cashew nuts", "pineapple", "ginger", "spring onions", "oyster sauce"],
    },
    {
        "name": "Greek Salad",
        "steps": [
            "Wash the cucumber and the tomatoes",
            "Chop the cucumber and the tomatoes into chunks",
            "Slice the red onion thinly",
            "Crumble the feta over the vegetables",
            "Dress with olive oil and oregano",
        ],
        "ingredients": [
            ("cucumber", 200, "g", 30, 7.2, 0.2, 1.3),
            ("tomatoes", 250, "g", 45, 9.7, 0.5, 2.2),
            ("red onion", 80, "g", 32, 7.5, 0.1, 0.9),
            ("feta", 100, "g", 264, 4.1, 21.3, 14.2),
            ("olive oil", 2, "tbsp", 238, 0.0, 27.0, 0.0),
            ("oregano", 1, "tsp", 3, 0.7, 0.0, 0.1),
        ],
        "similar": ["Fattoush", "Caprese Salad", "Panzanella", "Tabbouleh"],
        # Too short a bank: ingredient_recognition falls back to the participant's other recipes.
        "unused": ["lettuce", "olives"],
    },
    {
        # A short recipe done several times: one capture each (like HD-EPIC's coffees).
        "name": "Filter Coffee",
        "steps": [
            "Grind the coffee beans",
            "Put the ground coffee in the filter",
            "Pour hot water over the coffee",
        ],
        "ingredients": [
            ("coffee beans", 15, "g", 2, 0.0, 0.0, 0.3),
            ("water", 250, "ml", 0, 0.0, 0.0, 0.0),
            # Three ingredients: video_nutrition_estimation must take negatives from other recipes.
            ("milk", 30, "ml", 14, 1.4, 0.5, 1.0),
        ],
        "similar": [],
        "unused": [],
    },
]

# Noun class categories for ingredient similarity fallbacks (HD_EPIC_noun_classes.csv).
NOUN_CATEGORIES = {
    "pasta": "carbohydrates", "rice": "carbohydrates", "egg noodles": "carbohydrates", "plain flour": "baking",
    "sugar": "baking", "onion": "vegetables", "red onion": "vegetables", "garlic": "vegetables",
    "potatoes": "vegetables", "spinach": "vegetables", "red pepper": "vegetables", "broccoli": "vegetables",
    "cucumber": "vegetables", "tomatoes": "vegetables", "chopped tomatoes": "vegetables",
    "olive oil": "oils", "vegetable oil": "oils", "sesame oil": "oils", "butter": "dairy", "milk": "dairy",
    "feta": "dairy", "eggs": "dairy", "salt": "spices", "oregano": "spices", "curry paste": "sauces",
    "soy sauce": "sauces", "honey": "sauces", "coconut milk": "sauces", "lemon juice": "sauces",
    "chicken breast": "meat", "coffee beans": "drinks", "water": "drinks", "vanilla sugar": "baking",
}

BACKGROUND_ACTIVITIES = ["Tidy up", "Wash the dishes", "Wipe the counter", "Check phone", "Put away shopping"]
