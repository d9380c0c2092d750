// Precompiled for attnscope_ui and its tests (ui/CMakeLists.txt, tests/ui/CMakeLists.txt): the Qt
// Widgets headers nearly every file includes. Files still include what they use.
#pragma once
#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QObject>
#include <QPainter>
#include <QPushButton>
#include <QSpinBox>
#include <QString>
#include <QStringList>
#include <QVBoxLayout>
#include <QWidget>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>
